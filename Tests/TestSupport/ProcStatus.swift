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

    /// Memory growth a sanitizer adds with no leak, KiB: `tools/test --sanitize` sets `SCREENCAST_SANITIZER`.
    /// Under ASan freed blocks wait in its quarantine (tools/sanitizers/environment: `quarantine_size_mb=32`)
    /// before they are reused, so a process that allocates and frees at a steady rate grows by up to that
    /// much plus redzones; under TSan the shadow of newly touched memory grows with it. 0 in a normal run,
    /// where the tests' own limits apply unchanged.
    public static var sanitizerGrowthAllowanceKiB: Int {
        ProcessInfo.processInfo.environment["SCREENCAST_SANITIZER"] == nil ? 0 : 48 * 1024
    }

    /// The entries of /proc/PID/fd, or nil when the process is gone.
    public static func openDescriptors(_ pid: Int32) -> Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"))?.count
    }
}
