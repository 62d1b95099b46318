import Foundation

/// How many threads libvpx gets by default: one, unless cores are idle (`--encoder-threads auto`).
///
/// VP8 with two threads is faster only while both cores are idle; with the other core busy it was seen
/// 10–20× slower (shared/notes/c-libraries.md). So a second thread is used only when, at start, at least two
/// cores beyond the one the call itself needs are idle by the 1-minute load average, and never more than 4.
public enum EncoderThreads {
    /// - Parameters:
    ///   - cores: online cores (`ProcessInfo.activeProcessorCount`).
    ///   - loadAverage: the 1-minute load average (`getloadavg`), runnable threads.
    /// - Returns: 1…4 threads.
    public static func automatic(cores: Int, loadAverage: Double) -> Int {
        let idle = Double(cores) - 1 - max(0, loadAverage)  // cores left after the call's own thread and the load
        guard idle >= 2 else { return 1 }
        return min(4, 1 + Int(idle / 2))
    }

    /// ``automatic(cores:loadAverage:)`` for this machine, now.
    public static func automaticForThisMachine() -> Int {
        var load = [0.0]
        let loadAverage = getloadavg(&load, 1) == 1 ? load[0] : Double(ProcessInfo.processInfo.activeProcessorCount)
        return automatic(cores: ProcessInfo.processInfo.activeProcessorCount, loadAverage: loadAverage)
    }
}
