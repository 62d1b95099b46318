import Foundation

/// Lines for people on stderr.
enum Console {
    /// Writes `line` and a newline to stderr in one `write(2)`.
    static func error(_ line: String) { writeAll(Array((line + "\n").utf8), to: STDERR_FILENO) }

    /// Writes all of `bytes` to `fd`; returns the `errno` of a failed write, else nil.
    @discardableResult
    static func writeAll(_ bytes: [UInt8], to fd: Int32) -> Int32? {
        bytes.withUnsafeBytes { raw -> Int32? in
            var offset = 0
            while offset < raw.count {
                let count = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += count
            }
            return nil
        }
    }
}

/// Buffered writes to stdout, 64 KiB at a time, for output that can be long (`inspect`).
final class StandardOutput {
    private var buffer: [UInt8] = []
    /// The `errno` of the first failed write; later output is discarded.
    private(set) var failure: Int32?

    init() { buffer.reserveCapacity(1 << 16) }

    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    func flush() {
        if failure == nil { failure = Console.writeAll(buffer, to: STDOUT_FILENO) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes, then throws `stdout: REASON` when a write failed.
    func finish() throws {
        flush()
        if let failure { throw DumpToolError.system("stdout", failure) }
    }

    deinit { flush() }
}

/// Number formats shared by summaries and progress lines.
enum Format {
    /// Seconds without a needless fraction: `10`, `0.5`, `2.25`.
    static func seconds(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(format: "%g", value)
    }

    /// `12.3 s` style elapsed time with one decimal.
    static func elapsed(_ micros: UInt64) -> String { String(format: "%.1f s", Double(micros) / 1e6) }

    /// Frames per second over `micros`, one decimal; `- fps` when no time passed.
    static func fps(_ frames: Int, over micros: UInt64) -> String {
        micros == 0 ? "- fps" : String(format: "%.1f fps", Double(frames) / (Double(micros) / 1e6))
    }
}
