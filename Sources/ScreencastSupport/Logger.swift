import Foundation
import Synchronization

/// Severity of a log line. Lines below a logger's threshold are not written.
public enum LogLevel: Int, Comparable, Sendable, CaseIterable {
    case debug = 0, info, warning, error

    /// The word written at the start of a line: `debug`, `info`, `warn`, `error`.
    public var name: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .warning: "warn"
        case .error: "error"
        }
    }

    /// Parses `debug`, `info`, `warn`/`warning` or `error` (the `--log-level` values).
    public init?(name: String) {
        switch name.lowercased() {
        case "debug": self = .debug
        case "info": self = .info
        case "warn", "warning": self = .warning
        case "error": self = .error
        default: return nil
        }
    }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// Where finished log lines go. The default writes to stderr; tests capture lines in memory.
public final class LogOutput: Sendable {
    private let write: @Sendable (String) -> Void
    private let lock = Mutex(())

    /// - Parameter write: receives one finished line (without newline); calls are serialised.
    public init(_ write: @escaping @Sendable (String) -> Void) { self.write = write }

    /// Writes each line plus `\n` to standard error with one `write(2)` call.
    public static let standardError = LogOutput { line in
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        _ = bytes.withUnsafeBytes { Foundation.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    func emit(_ line: String) { lock.withLock { _ in write(line) } }
}

/// A library-style logger: one line per event, `level component message key=value…`.
///
/// Messages are fixed text; data goes in `fields` (values with spaces or quotes are quoted).
/// Passed in to the code that logs, never global.
public struct Logger: Sendable {
    public let component: String
    public let threshold: LogLevel
    private let output: LogOutput

    public init(component: String, threshold: LogLevel = .info, output: LogOutput = .standardError) {
        self.component = component
        self.threshold = threshold
        self.output = output
    }

    /// The same output and threshold under another component name.
    public func named(_ component: String) -> Logger {
        Logger(component: component, threshold: threshold, output: output)
    }

    public func log(_ level: LogLevel, _ message: String, _ fields: KeyValuePairs<String, Any> = [:]) {
        guard level >= threshold else { return }
        var line = "\(level.name) \(component) \(message)"
        for (key, value) in fields {
            line += " \(key)=\(Logger.quoted(String(describing: value)))"
        }
        output.emit(line)
    }

    public func debug(_ message: String, _ fields: KeyValuePairs<String, Any> = [:]) { log(.debug, message, fields) }
    public func info(_ message: String, _ fields: KeyValuePairs<String, Any> = [:]) { log(.info, message, fields) }
    public func warning(_ message: String, _ fields: KeyValuePairs<String, Any> = [:]) { log(.warning, message, fields) }
    public func error(_ message: String, _ fields: KeyValuePairs<String, Any> = [:]) { log(.error, message, fields) }

    /// A field value as written: bare when it is a plain word, else in double quotes with `\` and `"`
    /// escaped, and every control or line-separating character (C0, DEL, C1, U+2028, U+2029) written as
    /// `\n`, `\r`, `\t` or `\u{XX}`, so one event stays one line whatever a peer put into the value.
    static func quoted(_ value: String) -> String {
        if !value.isEmpty, !value.unicodeScalars.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || needsEscape($0) }) {
            return value
        }
        var escaped = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where needsEscape(scalar): escaped += "\\u{\(String(scalar.value, radix: 16))}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped + "\""
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }
}
