import CongestionSimulation
import Foundation
import ScreencastSupport

/// `screencast-bench gcc-sim`: runs a congestion-control scenario in the in-memory simulator
/// (``CongestionSimulation``) and prints one CSV row per simulated second, for plotting (tools/bench).
enum GCCSimCommand {
    static let usage = """
        Usage: screencast-bench gcc-sim [--profile steps|bottleneck|loss] [--seconds S] [--start KBPS]
                                        [--record FILE]

        Sender-side GCC (CongestionControl) against a simulated link: a FIFO drop-tail queue, 25 ms one way,
        TWCC feedback every 100 ms, a sender that wants 3 Mbit/s. Prints CSV on stdout:
        second,capacity_kbps,target_kbps,delivered_kbps,acknowledged_kbps,queue_ms,link_loss,usage

          --profile NAME   steps (default): 1 Mbit/s, 300 kbit/s from 20 s, 3 Mbit/s from 40 s (60 s);
                           bottleneck: 1 Mbit/s (20 s); loss: 5 Mbit/s with 2 % random loss (30 s)
          --seconds S      override the profile's duration (steps scales its step times with it)
          --start KBPS     the controller's start rate, 100-3000 kbit/s (default 300)
          --record FILE    also write what the controller saw (SimulationRecording text) to FILE
        """

    static func run(_ words: [String]) throws -> Int32 {
        let arguments = try CommandLineArguments(words, options: ["profile", "seconds", "start", "record"], flags: ["help"])
        if arguments.has("help") { print(usage); return 0 }
        let seconds = try arguments.double("seconds", in: 1...3600)
        var scenario: CongestionSimulation.Scenario
        switch arguments.string("profile") ?? "steps" {
        case "steps":
            let total = seconds ?? 60
            scenario = .steps(downAt: total / 3, upAt: 2 * total / 3, seconds: total)
        case "bottleneck": scenario = .bottleneck(seconds: seconds ?? 20)
        case "loss": scenario = .randomLoss(seconds: seconds ?? 30)
        case let other: throw UsageError("unknown profile '\(other)' (steps, bottleneck, loss)")
        }
        if let start = try arguments.int("start", in: 100...3000) {
            scenario.sender.controller.startBitsPerSecond = start * 1000
        }
        let recordPath = arguments.string("record")
        var simulation = try CongestionSimulation(scenario: scenario, recordEvents: recordPath != nil)
        let started = MonotonicClock.nowMicros()
        let rows = try simulation.run()
        print("second,capacity_kbps,target_kbps,delivered_kbps,acknowledged_kbps,queue_ms,link_loss,usage")
        for row in rows {
            let acknowledged = row.acknowledgedBitsPerSecond.map { String($0 / 1000) } ?? ""
            print("\(row.second),\(row.capacityBitsPerSecond / 1000),\(row.targetBitsPerSecond / 1000),"
                + "\(row.deliveredBitsPerSecond / 1000),\(acknowledged),\(String(format: "%.1f", row.queueDelayMillis)),"
                + "\(String(format: "%.3f", row.linkLossFraction)),\(row.usage.rawValue)")
        }
        if let recordPath {
            let link = scenario.link
            let comments = ["made by: screencast-bench gcc-sim " + words.filter { $0 != recordPath }.joined(separator: " ")
                                .replacingOccurrences(of: "--record", with: "--record FILE"),
                            "link: queue \(link.queueBytes) bytes, \(link.propagationMicros) us one way, loss \(link.lossRate), "
                                + "overhead \(link.overheadBytes) bytes, feedback every \(scenario.feedbackIntervalMicros) us"]
                + scenario.capacity.map { "capacity \($0.atMicros) \($0.bitsPerSecond)" }
            let recording = SimulationRecording(comments: comments, configuration: scenario.sender.controller,
                                                events: simulation.events)
            try recording.text.write(toFile: recordPath, atomically: true, encoding: .utf8)
        }
        let elapsed = Double(MonotonicClock.nowMicros() - started) / 1e6
        FileHandle.standardError.write(Data("gcc-sim: \(rows.count) simulated seconds in \(String(format: "%.2f", elapsed)) s\n".utf8))
        return 0
    }
}
