import Foundation

/// A bad command line: the executable prints `name: reason` and a pointer to `--help`, then exits 64.
public struct UsageError: Error, CustomStringConvertible, Equatable {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// Exit codes shared by every executable (see docs/architecture.md, "Conventions", and README, "Exit codes"). One rule:
/// what the user fixes by changing the command line is ``usage``; what failed while running, or outside the
/// command line's reach, is ``failure``.
public enum ExitCode {
    /// Done.
    public static let success: Int32 = 0
    /// A runtime failure: input that did not decode, a socket or port in use, the X server unreachable or
    /// lost, a full disk, a truncated stream, a peer that went away.
    public static let failure: Int32 = 1
    /// Bad usage (`EX_USAGE` from sysexits.h), found before any work starts: an unknown option, a malformed
    /// or out-of-range value, or a value naming something that is not there or cannot be used as asked (a
    /// missing, unreadable or folder input file, an output whose folder is missing, a key file others can
    /// read, a monitor the display lacks, a region outside the screen).
    public static let usage: Int32 = 64
}

/// A small command-line scanner: `--name value`, `--name=value`, boolean flags, and positionals.
///
/// Declare what a command accepts, then read values; anything undeclared, a missing value, or a
/// value that does not parse throws ``UsageError``.
public struct CommandLineArguments {
    public private(set) var positionals: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// - Parameters:
    ///   - arguments: the words after the executable (and subcommand) name.
    ///   - options: long names (without `--`) that take a value; may repeat.
    ///   - flags: long names that take no value.
    public init(_ arguments: [String], options: Set<String>, flags: Set<String>) throws(UsageError) {
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let word = arguments[index]
            index += 1
            if onlyPositionals || !word.hasPrefix("--") || word == "-" {
                if !onlyPositionals, word.hasPrefix("-"), word != "-", word.count > 1 {
                    throw UsageError("unknown option '\(word)'")
                }
                positionals.append(word)
                continue
            }
            if word == "--" { onlyPositionals = true; continue }
            let body = word.dropFirst(2)
            let name: String
            var inline: String?
            if let eq = body.firstIndex(of: "=") {
                name = String(body[..<eq])
                inline = String(body[body.index(after: eq)...])
            } else {
                name = String(body)
            }
            if flags.contains(name) {
                guard inline == nil else { throw UsageError("option '--\(name)' takes no value") }
                self.flags.insert(name)
            } else if options.contains(name) {
                let value: String
                if let inline {
                    value = inline
                } else {
                    guard index < arguments.count else { throw UsageError("option '--\(name)' needs a value") }
                    // `--format --display :0`: the value was forgotten; taking "--display" as it would only
                    // confuse (":0" then reads as an unexpected argument). `--name=--value` still passes one.
                    let next = arguments[index]
                    if next.hasPrefix("--"), next.count > 2 {
                        let nextName = String(next.dropFirst(2).prefix { $0 != "=" })
                        if options.contains(nextName) || flags.contains(nextName) {
                            throw UsageError("option '--\(name)' needs a value (found the option '--\(nextName)' instead)")
                        }
                    }
                    value = next
                    index += 1
                }
                values[name, default: []].append(value)
            } else {
                throw UsageError("unknown option '--\(name)'")
            }
        }
    }

    /// True when the flag was given.
    public func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// The last value given for `name`, or nil.
    public func string(_ name: String) -> String? { values[name]?.last }

    /// Every value given for a repeatable option, in order.
    public func strings(_ name: String) -> [String] { values[name] ?? [] }

    /// The option parsed as an integer within `range`, or nil when absent.
    public func int(_ name: String, in range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = string(name) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw UsageError("--\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return value
    }

    /// The option parsed as a number within `range`, or nil when absent.
    public func double(_ name: String, in range: ClosedRange<Double>) throws(UsageError) -> Double? {
        guard let text = string(name) else { return nil }
        guard let value = Double(text), value.isFinite, range.contains(value) else {
            throw UsageError("--\(name) must be a number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return value
    }

    /// The seconds between stats lines (`--stats-interval`, both programs): 0 turns the line off, else 0.1 to
    /// 86 400 (a timer firing faster than 10 times a second would spend the process on stats lines); nil
    /// when absent.
    /// - Throws: ``UsageError`` naming the option and the text for anything else (not a number, below 0.1
    ///   but not 0, above 86 400).
    public func statsInterval(_ name: String = "stats-interval") throws(UsageError) -> Double? {
        guard let text = string(name) else { return nil }
        guard let value = Double(text), value == 0 || (0.1...86_400).contains(value) else {
            throw UsageError("--\(name) must be 0 (none) or from 0.1 to 86400 seconds, not '\(text)'")
        }
        return value
    }

    /// `--log-format text|json` (both programs); nil when absent.
    /// - Throws: ``UsageError`` naming the option and the text for anything else.
    public func logFormat(_ name: String = "log-format") throws(UsageError) -> LogFormat? {
        guard let text = string(name) else { return nil }
        guard let format = LogFormat(rawValue: text) else { throw UsageError("--\(name) must be text or json, not '\(text)'") }
        return format
    }

    /// Exactly `count` positionals, named in the error when missing or extra.
    public func positionals(exactly count: Int, names: String) throws(UsageError) -> [String] {
        guard positionals.count == count else {
            if positionals.count < count { throw UsageError("missing \(names)") }
            throw UsageError("unexpected argument '\(positionals[count])'")
        }
        return positionals
    }
}
