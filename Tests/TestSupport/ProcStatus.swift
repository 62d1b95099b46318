import Foundation

/// What /proc says about a running process: its resident memory and its open descriptors.
public enum ProcStatus {
    /// `VmRSS` of /proc/PID/status in KiB, or nil when the process is gone.
    public static func residentKiB(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }

    /// The memory growth a test allows a process: `normal` KiB in a normal run; no bound under a sanitizer
    /// (`tools/test --sanitize` sets `SCREENCAST_SANITIZER`), where RSS says nothing about our memory: ASan
    /// holds freed blocks in its quarantine and size-class caches (measured: +45 to +64 MiB over the chaos
    /// tests where a normal run grows by under 1 MiB), TSan adds shadow memory for what is touched. Leaks
    /// are LeakSanitizer's to find there. Says so on stdout when it lifts the bound.
    public static func growthLimitKiB(_ normal: Int) -> Int {
        guard let sanitizer = ProcessInfo.processInfo.environment["SCREENCAST_SANITIZER"] else { return normal }
        print("memory growth not bounded under --sanitize \(sanitizer) (its allocator keeps freed memory); \(normal) KiB in a normal run")
        return Int.max
    }

    /// The entries of /proc/PID/fd, or nil when the process is gone.
    public static func openDescriptors(_ pid: Int32) -> Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"))?.count
    }
}
