internal import CUsrSCTP
import Foundation
import Glibc
import Synchronization

/// usrsctp's process-wide part: `usrsctp_init_nothreads` once per process (on first use; never
/// `usrsctp_finish`d, since associations may exist until the process exits), the thread of ours that runs
/// its timers, and the table that maps the address each association registers (`usrsctp_register_address`:
/// an id, never a pointer to an object) to its ``SCTPConduit``.
///
/// Why no usrsctp threads: `usrsctp_init` starts, besides its timer thread, receive threads on raw IPv4 and
/// IPv6 SCTP sockets (a process running as root gets them), which conn mode never needs and which would
/// take SCTP packets from the network. Instead the thread `sctp-timers` calls `usrsctp_handle_timers` with
/// the milliseconds elapsed, every ``timerTickMillis`` (every 200 ms while no association exists).
///
/// Threads: the timer thread (retransmissions, delayed SACKs, heartbeats) calls the output callback and the
/// socket upcall; the owner's calls (`usrsctp_conninput`, `usrsctp_sendv`, `usrsctp_recvv`, …) call them
/// too, on the owner's thread. Both callbacks only look the conduit up under
/// this table's lock and hand it bytes or a flag under its own lock; neither calls back into usrsctp, so no
/// lock order is ever inverted. An address removed from the table (its association closed) is ignored by
/// a callback that comes late.
final class SCTPStack: Sendable {
    static let shared = SCTPStack()

    /// SCTP's send and receive buffers (bytes, `sctp_sendspace` / `sctp_recvspace`): room for four of the
    /// largest messages we take (``DataChannelSession/maxMessageSize``) in flight.
    static let bufferBytes: UInt32 = 1 << 20

    private struct Table: ~Copyable {
        var next: UInt = 1
        var conduits: [UInt: SCTPConduit] = [:]
    }
    private let table = Mutex(Table())

    /// How often the timer thread runs usrsctp's timers (ms): usrsctp's own thread ticks every 10 ms.
    static let timerTickMillis: UInt32 = 10

    private init() {
        // Port 0: no UDP encapsulation socket (conn mode only). No debug printer.
        usrsctp_init_nothreads(0, SCTPStack.output, nil)
        cusrsctp_tune(Self.bufferBytes)
        let thread = Thread {
            var last = SCTPStack.nowMillis()
            while true {
                // No association, nothing to time: tick 20 times slower (the process may never share again).
                let idle = SCTPStack.shared.table.withLock { $0.conduits.isEmpty }
                usleep(Self.timerTickMillis * 1000 * (idle ? 20 : 1))
                let now = SCTPStack.nowMillis()
                usrsctp_handle_timers(UInt32(truncatingIfNeeded: now &- last))
                last = now
            }
        }
        thread.name = "sctp-timers"
        thread.start()
    }

    private static func nowMillis() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1000 + UInt64(time.tv_nsec) / 1_000_000
    }

    /// Makes usrsctp skip the CRC32c of packets in and out (`usrsctp_enable_crc32c_offload`), process-wide,
    /// so a fuzzer's packets reach the chunk parsers. For fuzz targets only: never in the call.
    func skipChecksumsForFuzzing() { usrsctp_enable_crc32c_offload() }

    /// Registers `conduit` and returns its address for `usrsctp_register_address` and sockaddr_conn.
    func register(_ conduit: SCTPConduit) -> UnsafeMutableRawPointer {
        let id = table.withLock { table in
            let id = table.next
            table.next += 1
            table.conduits[id] = conduit
            return id
        }
        let address = UnsafeMutableRawPointer(bitPattern: id)!  // ids start at 1
        usrsctp_register_address(address)
        return address
    }

    /// Forgets the address: callbacks that still name it are ignored.
    func deregister(_ address: UnsafeMutableRawPointer) {
        usrsctp_deregister_address(address)
        _ = table.withLock { $0.conduits.removeValue(forKey: UInt(bitPattern: address)) }
    }

    func conduit(_ address: UnsafeMutableRawPointer?) -> SCTPConduit? {
        guard let address else { return nil }
        return table.withLock { $0.conduits[UInt(bitPattern: address)] }
    }

    /// usrsctp's conn_output: one SCTP packet for the association registered at `address`.
    private static let output: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int, UInt8, UInt8) -> Int32 = {
        address, buffer, length, _, _ in
        guard let buffer, length > 0, let conduit = SCTPStack.shared.conduit(address) else { return 0 }
        conduit.output(UnsafeRawBufferPointer(start: buffer, count: length))
        return 0
    }

    /// usrsctp's socket upcall (something to read, or the socket's state changed); `argument` is the address.
    static let upcall: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32) -> Void = { _, argument, _ in
        SCTPStack.shared.conduit(argument)?.readable()
    }
}
