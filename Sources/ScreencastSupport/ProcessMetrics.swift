import Foundation

/// This process's `process_*` numbers as the Prometheus client libraries name them (client_golang's process
/// collector, client_python's `ProcessCollector`), read from Linux's `/proc` (proc(5)).
public struct ProcessMetrics: Sendable, Equatable {
    /// User plus system CPU time, seconds (`/proc/self/stat` fields 14 and 15, in clock ticks).
    public var cpuSeconds: Double
    /// Resident set size, bytes (`/proc/self/stat` field 24, pages).
    public var residentBytes: Int
    /// Virtual memory size, bytes (`/proc/self/stat` field 23).
    public var virtualBytes: Int
    /// Descriptors open now (entries of `/proc/self/fd`).
    public var openDescriptors: Int
    /// The soft limit on descriptors (`RLIMIT_NOFILE`).
    public var maxDescriptors: Int
    /// When the process started, seconds since the Unix epoch: the boot time (`/proc/stat` `btime`) plus
    /// `/proc/self/stat` field 22 (clock ticks after boot).
    public var startTimeSeconds: Double

    public init(cpuSeconds: Double, residentBytes: Int, virtualBytes: Int, openDescriptors: Int, maxDescriptors: Int, startTimeSeconds: Double) {
        self.cpuSeconds = cpuSeconds
        self.residentBytes = residentBytes
        self.virtualBytes = virtualBytes
        self.openDescriptors = openDescriptors
        self.maxDescriptors = maxDescriptors
        self.startTimeSeconds = startTimeSeconds
    }

    /// This process now; nil when `/proc` is not there or says something unexpected.
    public static func current() -> ProcessMetrics? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let system = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let bootTime = bootTimeSeconds(procStat: system) else { return nil }
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count).map { $0 - 1 } ?? 0  // less the listing's own
        var limit = rlimit()
        let maximum = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? Int(clamping: limit.rlim_cur) : 0
        return parse(
            stat: stat, bootTimeSeconds: bootTime, ticksPerSecond: Double(sysconf(Int32(_SC_CLK_TCK))),
            pageBytes: Int(sysconf(Int32(_SC_PAGESIZE))), openDescriptors: descriptors, maxDescriptors: maximum)
    }

    /// The numbers from the text of `/proc/PID/stat` (proc(5): the command name in parentheses may hold spaces
    /// and parentheses, so fields are counted after its last `)`); nil when a field is missing or not a number.
    public static func parse(
        stat: String, bootTimeSeconds: Double, ticksPerSecond: Double, pageBytes: Int, openDescriptors: Int, maxDescriptors: Int
    ) -> ProcessMetrics? {
        guard ticksPerSecond > 0, let close = stat.lastIndex(of: ")") else { return nil }
        // After ") ": field 3 (state) is index 0, so field N is index N - 3.
        let fields = stat[stat.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        func field(_ number: Int) -> Double? { fields.count > number - 3 ? Double(fields[number - 3]) : nil }
        guard let user = field(14), let system = field(15), let start = field(22), let virtual = field(23), let resident = field(24)
        else { return nil }
        return ProcessMetrics(
            cpuSeconds: (user + system) / ticksPerSecond, residentBytes: Int(resident) * pageBytes, virtualBytes: Int(virtual),
            openDescriptors: openDescriptors, maxDescriptors: maxDescriptors, startTimeSeconds: bootTimeSeconds + start / ticksPerSecond)
    }

    /// The `btime` line of `/proc/stat`: when the machine booted, seconds since the Unix epoch.
    public static func bootTimeSeconds(procStat: String) -> Double? {
        for line in procStat.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst(6).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// The `process_*` families, as the client libraries write them.
    public func write(to metrics: inout MetricsText) {
        metrics.single("process_cpu_seconds_total", .counter, help: "Total user and system CPU time spent in seconds.", cpuSeconds)
        metrics.single("process_resident_memory_bytes", .gauge, help: "Resident memory size in bytes.", Double(residentBytes))
        metrics.single("process_virtual_memory_bytes", .gauge, help: "Virtual memory size in bytes.", Double(virtualBytes))
        metrics.single("process_open_fds", .gauge, help: "Number of open file descriptors.", Double(openDescriptors))
        metrics.single("process_max_fds", .gauge, help: "Maximum number of open file descriptors.", Double(maxDescriptors))
        metrics.single(
            "process_start_time_seconds", .gauge, help: "Start time of the process since unix epoch in seconds.", startTimeSeconds)
    }
}
