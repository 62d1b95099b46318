import CongestionControl

/// The scenarios of issue 12 (tests and `screencast-bench gcc-sim` share them): a screen sender that wants
/// 3 Mbit/s, 1200-byte packets at 30 fps, TWCC feedback every 100 ms, 25 ms one-way propagation.
extension CongestionSimulation.Scenario {
    /// The sender's controller limits: 100 kbit/s … 3 Mbit/s, starting at `start` (libwebrtc starts at 300 kbit/s).
    public static func senderConfiguration(startBitsPerSecond: Int = 300_000) -> SimulatedSender.Configuration {
        SimulatedSender.Configuration(controller: .init(minBitsPerSecond: 100_000, startBitsPerSecond: startBitsPerSecond,
                                                        maxBitsPerSecond: 3_000_000))
    }

    /// A link with a drop-tail queue of `queueMillis` at its first capacity (at least 10 KB), 25 ms one way,
    /// 28 bytes of IP/UDP overhead per packet.
    public static func link(capacityBitsPerSecond: Int, queueMillis: Int = 100, lossRate: Double = 0, seed: UInt64 = 1)
        -> BottleneckLink.Configuration
    {
        BottleneckLink.Configuration(queueBytes: max(10_000, capacityBitsPerSecond / 8 * queueMillis / 1000),
                                     propagationMicros: 25_000, lossRate: lossRate, overheadBytes: 28, seed: seed)
    }

    /// A 1 Mbit/s bottleneck for `seconds`.
    public static func bottleneck(startBitsPerSecond: Int = 300_000, seconds: Double = 20) -> Self {
        Self(capacity: [.init(atSeconds: 0, bitsPerSecond: 1_000_000)], link: link(capacityBitsPerSecond: 1_000_000),
             sender: senderConfiguration(startBitsPerSecond: startBitsPerSecond), durationSeconds: seconds)
    }

    /// The step profile: 1 Mbit/s, then 300 kbit/s from `downAt`, then 3 Mbit/s from `upAt`, until `seconds`.
    /// The queue holds 100 ms at 1 Mbit/s (12.5 KB) throughout, as a fixed router buffer would.
    public static func steps(downAt: Double = 20, upAt: Double = 40, seconds: Double = 60) -> Self {
        Self(capacity: [.init(atSeconds: 0, bitsPerSecond: 1_000_000), .init(atSeconds: downAt, bitsPerSecond: 300_000),
                        .init(atSeconds: upAt, bitsPerSecond: 3_000_000)],
             link: link(capacityBitsPerSecond: 1_000_000), sender: senderConfiguration(), durationSeconds: seconds)
    }

    /// Ample capacity (`capacity`, above the sender's 3 Mbit/s) with `lossRate` random loss (seeded).
    public static func randomLoss(_ lossRate: Double = 0.02, capacityBitsPerSecond: Int = 5_000_000, seconds: Double = 30,
                                  seed: UInt64 = 0x1055) -> Self {
        Self(capacity: [.init(atSeconds: 0, bitsPerSecond: capacityBitsPerSecond)],
             link: link(capacityBitsPerSecond: capacityBitsPerSecond, lossRate: lossRate, seed: seed),
             sender: senderConfiguration(), durationSeconds: seconds)
    }
}
