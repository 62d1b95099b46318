import Dispatch
import Foundation
import Synchronization

/// Tells a service manager (systemd, `Type=notify`) how the service is: `READY=1` once it serves, `STATUS=…`,
/// `STOPPING=1`, and `WATCHDOG=1` keep-alives while `WatchdogSec=` is set.
///
/// The protocol of sd_notify(3), written here rather than linked from libsystemd (one datagram, no library
/// to depend on, in the package or elsewhere): each message is one `AF_UNIX` `SOCK_DGRAM` datagram of
/// newline-separated `KEY=VALUE` assignments sent to the socket named by `$NOTIFY_SOCKET` (a path, or an
/// abstract socket when it starts with `@`). `$WATCHDOG_USEC` gives the watchdog period in µs, meant for this
/// process only when `$WATCHDOG_PID` is unset or names it; systemd asks for a ping at least every period and
/// recommends one every half period (sd_watchdog_enabled(3)).
///
/// Without `$NOTIFY_SOCKET` (not run by systemd, or `Type=simple`) ``init(environment:)`` returns nil and
/// nothing is sent.
public final class ServiceNotifier: Sendable {
    /// The datagram socket, connected to `$NOTIFY_SOCKET`; closed in `deinit`.
    private let descriptor: Int32
    /// The watchdog period asked for, µs (nil: no watchdog for this process).
    public let watchdogMicros: UInt64?
    /// The longest `$NOTIFY_SOCKET` path (`sockaddr_un.sun_path` less its terminating zero).
    public static let maximumPathBytes = 107
    private let timer = Mutex<(any DispatchSourceTimer)?>(nil)

    /// Reads `$NOTIFY_SOCKET`, `$WATCHDOG_USEC` and `$WATCHDOG_PID` from `environment`.
    /// - Returns: nil without `$NOTIFY_SOCKET`, or when it is not an absolute path nor `@name`, is too long, or
    ///   the socket cannot be made.
    public init?(environment: [String: String] = ProcessInfo.processInfo.environment, pid: Int32 = getpid()) {
        guard let path = environment["NOTIFY_SOCKET"], path.hasPrefix("/") || path.hasPrefix("@"), path.utf8.count >= 2,
              path.utf8.count <= Self.maximumPathBytes else { return nil }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        if bytes[0] == UInt8(ascii: "@") { bytes[0] = 0 }  // the abstract namespace: a leading zero byte
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        descriptor = fd
        let forUs = environment["WATCHDOG_PID"].map { Int32($0) == pid } ?? true
        watchdogMicros = forUs ? environment["WATCHDOG_USEC"].flatMap(UInt64.init).flatMap { $0 > 0 ? $0 : nil } : nil
    }

    deinit {
        timer.withLock { $0?.cancel() }
        close(descriptor)
    }

    /// Sends one datagram of `assignments` (`READY=1`, `STATUS=…`), joined by newlines. A value with a newline
    /// would start another assignment: newlines in values are replaced with spaces.
    /// - Returns: whether the datagram was sent whole.
    @discardableResult
    public func notify(_ assignments: [String]) -> Bool {
        let text = assignments.map { $0.replacingOccurrences(of: "\n", with: " ") }.joined(separator: "\n")
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// `READY=1` with a `STATUS=` line for `systemctl status`.
    public func ready(status: String) { notify(["READY=1", "STATUS=" + status]) }

    /// `STOPPING=1` with why.
    public func stopping(reason: String) { notify(["STOPPING=1", "STATUS=stopping: " + reason]) }

    /// While `WatchdogSec=` is set for this process, sends `WATCHDOG=1` every half period on a queue of its own,
    /// each time `isAlive()` says the service still works (a hung service stops pinging and systemd restarts
    /// it). Nothing without a watchdog. Stops at `deinit`.
    public func startWatchdog(isAlive: @escaping @Sendable () -> Bool) {
        guard let period = watchdogMicros else { return }
        let interval = DispatchTimeInterval.microseconds(Int(clamping: max(period / 2, 1)))
        // Made under the lock: the timer is not Sendable and never leaves it.
        timer.withLock { current in
            current?.cancel()
            let source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "screencast.watchdog"))
            source.schedule(deadline: .now() + interval, repeating: interval)
            source.setEventHandler { [weak self] in
                guard let self, isAlive() else { return }
                self.notify(["WATCHDOG=1"])
            }
            source.resume()
            current = source
        }
    }
}
