import Glibc
import Synchronization

/// What usrsctp's callbacks leave for one association's owner: the SCTP packets to send and a "readable"
/// flag, under a lock, and a wake-up for the owner when a callback comes on a thread that is not the owner's
/// (usrsctp's timer thread). While the owner is inside a call into usrsctp (``enter()``…``leave()``), callbacks
/// on its thread do not wake it: it collects what they left when the call returns.
final class SCTPConduit: Sendable {
    fileprivate struct State {
        var packets: [[UInt8]] = []
        var readable = false
        var owner: pthread_t?
        var wakePending = false
    }
    private let state = Mutex(State())
    private let wake: @Sendable () -> Void

    /// The most SCTP packets kept for the owner (a packet beyond is dropped: SCTP retransmits it). The owner
    /// takes them after each call and on each wake-up; usrsctp's timer thread makes a few per tick.
    static let maxQueuedPackets = 1024

    init(wake: @escaping @Sendable () -> Void) { self.wake = wake }

    func output(_ packet: UnsafeRawBufferPointer) {
        let shouldWake = state.withLock { state -> Bool in
            if state.packets.count < Self.maxQueuedPackets { state.packets.append(Array(packet)) }
            return state.markForWake()
        }
        if shouldWake { wake() }
    }

    func readable() {
        let shouldWake = state.withLock { state -> Bool in
            state.readable = true
            return state.markForWake()
        }
        if shouldWake { wake() }
    }

    /// The owner is about to call usrsctp on this thread.
    func enter() { state.withLock { $0.owner = pthread_self() } }
    func leave() { state.withLock { $0.owner = nil } }

    /// The packets left since the last take, oldest first, and whether the socket became readable; clears
    /// both and the pending wake-up.
    func take() -> (packets: [[UInt8]], readable: Bool) {
        state.withLock { state in
            defer {
                state.packets.removeAll(keepingCapacity: true)
                state.readable = false
                state.wakePending = false
            }
            return (state.packets, state.readable)
        }
    }
}

extension SCTPConduit.State {
    /// True when the owner must be woken: the callback runs on another thread and no wake-up is pending.
    fileprivate mutating func markForWake() -> Bool {
        if let owner, pthread_equal(owner, pthread_self()) != 0 { return false }
        if wakePending { return false }
        wakePending = true
        return true
    }
}
