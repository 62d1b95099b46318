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

/// How a log line is written (`--log-format`).
public enum LogFormat: String, Sendable, CaseIterable {
    /// `level component message key=value…` (the default; values quoted when they need it).
    case text
    /// One JSON object a line (JSON Lines, for journald, Loki, ELK): `{"time", "level", "logger", "message",
    /// "fields"}`, `time` in RFC 3339 UTC with milliseconds, `fields` an object of the event's data (integers
    /// and booleans as JSON numbers and booleans, finite floating-point numbers as numbers, the rest as strings).
    case json
}

/// A library-style logger: one line per event, `level component message key=value…` (or, with
/// ``LogFormat/json``, one JSON object a line).
///
/// Messages are fixed text; data goes in `fields` (values with spaces or quotes are quoted).
/// Passed in to the code that logs, never global.
public struct Logger: Sendable {
    public let component: String
    public let threshold: LogLevel
    public let format: LogFormat
    private let output: LogOutput
    /// The wall clock of JSON lines' `time`, seconds since the Unix epoch (injected in tests).
    private let wallClock: @Sendable () -> Double

    public init(
        component: String, threshold: LogLevel = .info, format: LogFormat = .text, output: LogOutput = .standardError,
        wallClock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
    ) {
        self.component = component
        self.threshold = threshold
        self.format = format
        self.output = output
        self.wallClock = wallClock
    }

    /// The same output, threshold and format under another component name.
    public func named(_ component: String) -> Logger {
        Logger(component: component, threshold: threshold, format: format, output: output, wallClock: wallClock)
    }

    public func log(_ level: LogLevel, _ message: String, _ fields: KeyValuePairs<String, Any> = [:]) {
        guard level >= threshold else { return }
        if format == .json {
            output.emit(Self.jsonLine(time: wallClock(), level: level, logger: component, message: message, fields: fields))
            return
        }
        var line = "\(level.name) \(component) \(message)"
        for (key, value) in fields {
            line += " \(key)=\(Logger.quoted(String(describing: value)))"
        }
        output.emit(line)
    }

    /// One event as a JSON object (``LogFormat/json``); `time` is seconds since the Unix epoch.
    static func jsonLine(time: Double, level: LogLevel, logger: String, message: String, fields: KeyValuePairs<String, Any>) -> String {
        let values: [(String, JSONValue)] = fields.map { key, value in
            let json: JSONValue = switch value {
            case let bool as Bool: .bool(bool)
            case let int as Int: .number(int)
            case let int as Int64: .number(int)
            case let int as UInt64: .number(int)
            case let int as Int32: .number(int)
            case let int as UInt32: .number(int)
            case let int as UInt16: .number(int)
            case let double as Double where double.isFinite: .double(double)
            default: .string(String(describing: value))
            }
            return (key, json)
        }
        return JSONValue.object([
            ("time", .string(rfc3339(time))), ("level", .string(level.name)), ("logger", .string(logger)),
            ("message", .string(message)), ("fields", .object(values)),
        ]).serialized
    }

    /// `2026-12-08T00:25:41.394Z`: RFC 3339 §5.6 in UTC, milliseconds.
    static func rfc3339(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.down))
        let millis = min(999, Int(((seconds - Double(whole)) * 1000).rounded(.down)))
        var time = time_t(whole)
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), millis)
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
