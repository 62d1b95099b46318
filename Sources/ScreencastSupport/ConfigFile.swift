/// A configuration file (`call.toml`, `agent.toml`) in the subset of TOML 1.0 (toml.io/en/v1.0.0) its settings
/// need: one `key = value` a line, at the top level.
///
///     # the call of the office screen            ← comment (TOML §Comment), also after a value
///     bitrate = 2500                             ← integer (§Integer: sign, digits, `_` between digits)
///     max-fps = 12.5                             ← float (§Float: fraction and/or exponent)
///     share = true                               ← boolean
///     source = "file:/srv/demo.frames"           ← basic string (§String: escapes \" \\ \b \t \n \f \r \uXXXX \UXXXXXXXX)
///     token = 'a\literal'                        ← literal string (no escapes)
///     ice-address = ["192.0.2.7", "127.0.0.1"]   ← array of strings, on one line (a repeatable option)
///
/// Keys are bare (`A-Za-z0-9_-`, §Keys). Not in the subset, and refused with a reason: tables (`[x]`), dotted
/// and quoted keys, multi-line strings and arrays, dates, inline tables, arrays of other types. TOML's rules
/// that do apply are kept: a key defined twice is an error; a value ends its line (only a comment may follow).
///
/// Sans-I/O: ``parse(_:)`` takes the text. Limits: ``maximumBytes`` of text, ``maximumArrayElements`` per array.
public enum ConfigFile {
    /// The largest file read, bytes: a settings file is a few hundred bytes.
    public static let maximumBytes = 65_536
    /// The most strings in one array.
    public static let maximumArrayElements = 256

    /// A value as written.
    public enum Value: Sendable, Equatable {
        case string(String)
        case integer(Int64)
        case float(Double)
        case boolean(Bool)
        case strings([String])
    }

    /// One `key = value` line.
    public struct Entry: Sendable, Equatable {
        public let key: String
        public let value: Value
        /// 1-based.
        public let line: Int
    }

    /// A line that breaks the subset: its number (1-based) and why.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let line: Int
        public let reason: String
        public var description: String { "line \(line): \(reason)" }
    }

    /// The entries of `text`, in order.
    /// - Throws: ``ParseError`` for the first line that breaks the subset (or the whole text over ``maximumBytes``, line 0).
    public static func parse(_ text: String) throws(ParseError) -> [Entry] {
        guard text.utf8.count <= maximumBytes else { throw ParseError(line: 0, reason: "longer than \(maximumBytes) bytes") }
        var entries: [Entry] = []
        var seen: [String: Int] = [:]
        var number = 0
        // On scalars: a String's CR LF is one Character, which a split on "\n" would not see.
        for rawLine in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            var line = Substring.UnicodeScalarView(rawLine)
            if line.last == "\r" { line.removeLast() }  // CRLF (TOML §Spec: newline is LF or CRLF)
            var reader = Reader(scalars: line, line: number)
            reader.skipSpaces()
            if reader.atEnd || reader.peek == "#" { continue }
            if reader.peek == "[" { throw ParseError(line: number, reason: "tables are not supported: every key goes at the top level") }
            let key = try reader.bareKey()
            reader.skipSpaces()
            guard reader.take("=") else {
                throw ParseError(line: number, reason: reader.atEnd ? "'\(key)' has no '= value'" : "expected '=' after '\(key)'")
            }
            reader.skipSpaces()
            let value = try reader.value()
            reader.skipSpaces()
            guard reader.atEnd || reader.peek == "#" else {
                throw ParseError(line: number, reason: "unexpected text after the value of '\(key)'")
            }
            try reader.checkComment()
            if let first = seen[key] { throw ParseError(line: number, reason: "'\(key)' is set twice (first on line \(first))") }
            seen[key] = number
            entries.append(Entry(key: key, value: value, line: number))
        }
        return entries
    }

    /// Reads one line's scalars left to right.
    struct Reader {
        var scalars: Substring.UnicodeScalarView
        let line: Int

        var atEnd: Bool { scalars.isEmpty }
        var peek: Unicode.Scalar? { scalars.first }

        func fail(_ reason: String) -> ParseError { ParseError(line: line, reason: reason) }

        mutating func skipSpaces() { while let s = peek, s == " " || s == "\t" { scalars.removeFirst() } }

        mutating func take(_ scalar: Unicode.Scalar) -> Bool {
            guard peek == scalar else { return false }
            scalars.removeFirst()
            return true
        }

        static func isBareKey(_ s: Unicode.Scalar) -> Bool {
            ("A"..."Z").contains(s) || ("a"..."z").contains(s) || ("0"..."9").contains(s) || s == "_" || s == "-"
        }

        mutating func bareKey() throws(ParseError) -> String {
            var key = ""
            while let s = peek, Self.isBareKey(s) {
                key.unicodeScalars.append(s)
                scalars.removeFirst()
            }
            if key.isEmpty {
                throw fail(peek == "\"" || peek == "'" ? "quoted keys are not supported: write the option's name bare"
                    : "expected a key (an option's long name), found '\(Self.shown(peek))'")
            }
            if peek == "." { throw fail("dotted keys are not supported: '\(key).…'") }
            return key
        }

        /// A comment may hold any character but the control ones other than tab (TOML §Comment).
        func checkComment() throws(ParseError) {
            for s in scalars where (s.value < 0x20 && s != "\t") || s.value == 0x7F {
                throw fail("a control character (U+\(String(s.value, radix: 16, uppercase: true))) in a comment")
            }
        }

        mutating func value() throws(ParseError) -> Value {
            switch peek {
            case nil: throw fail("a key without a value")
            case "\""?, "'"?: return .string(try string())
            case "["?: return .strings(try stringArray())
            case "{"?: throw fail("inline tables are not supported")
            default:
                var word = ""
                while let s = peek, s != " ", s != "\t", s != "#", s != ",", s != "]" {
                    word.unicodeScalars.append(s)
                    scalars.removeFirst()
                }
                if word == "true" { return .boolean(true) }
                if word == "false" { return .boolean(false) }
                if let integer = Self.integer(word) { return .integer(integer) }
                if let float = Self.float(word) { return .float(float) }
                throw fail("'\(word.prefix(40))' is not a value: strings go in quotes (\"…\"), numbers and true/false bare")
            }
        }

        mutating func string() throws(ParseError) -> String {
            let quote = scalars.removeFirst()
            if scalars.starts(with: [quote, quote]) { throw fail("multi-line strings are not supported") }
            var text = ""
            while let s = peek {
                scalars.removeFirst()
                if s == quote { return text }
                if (s.value < 0x20 && s != "\t") || s.value == 0x7F {
                    throw fail("a control character (U+\(String(s.value, radix: 16, uppercase: true))) in a string: escape it")
                }
                if s == "\\", quote == "\"" {
                    text.unicodeScalars.append(try escape())
                } else {
                    text.unicodeScalars.append(s)
                }
            }
            throw fail("a string without its closing \(quote)")
        }

        /// After a backslash in a basic string (TOML §String).
        mutating func escape() throws(ParseError) -> Unicode.Scalar {
            guard let s = peek else { throw fail("a string without its closing \"") }
            scalars.removeFirst()
            switch s {
            case "\"": return "\""
            case "\\": return "\\"
            case "b": return "\u{08}"
            case "t": return "\t"
            case "n": return "\n"
            case "f": return "\u{0C}"
            case "r": return "\r"
            case "u", "U":
                let count = s == "u" ? 4 : 8
                var hex = ""
                for _ in 0..<count {
                    guard let digit = peek, digit.properties.isASCIIHexDigit else { throw fail("\\\(s) needs \(count) hexadecimal digits") }
                    hex.unicodeScalars.append(digit)
                    scalars.removeFirst()
                }
                guard let value = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(value) else {
                    throw fail("\\\(s)\(hex) is not a Unicode scalar value")
                }
                return scalar
            default: throw fail("unknown escape \\\(Self.shown(s)) in a string")
            }
        }

        mutating func stringArray() throws(ParseError) -> [String] {
            scalars.removeFirst()  // [
            var values: [String] = []
            skipSpaces()
            if take("]") { return values }
            while true {
                skipSpaces()
                guard let s = peek else { throw fail("an array must close on its line (multi-line arrays are not supported)") }
                guard s == "\"" || s == "'" else { throw fail("arrays hold strings only (in quotes)") }
                values.append(try string())
                guard values.count <= ConfigFile.maximumArrayElements else {
                    throw fail("more than \(ConfigFile.maximumArrayElements) values in an array")
                }
                skipSpaces()
                if take("]") { return values }
                guard take(",") else {
                    throw fail(atEnd ? "an array must close on its line (multi-line arrays are not supported)" : "expected ',' or ']' in an array")
                }
                skipSpaces()
                if take("]") { return values }  // a trailing comma (TOML §Array)
            }
        }

        /// TOML §Integer, decimal only: an optional sign, no leading zero, `_` only between digits.
        static func integer(_ word: String) -> Int64? {
            var digits = Substring(word)
            var sign = ""
            if let first = digits.first, first == "+" || first == "-" {
                sign = first == "-" ? "-" : ""
                digits = digits.dropFirst()
            }
            guard let plain = underscoresBetweenDigits(digits), !plain.isEmpty, plain == "0" || plain.first != "0" else { return nil }
            return Int64(sign + plain)
        }

        /// TOML §Float: an integer part, then a fraction, an exponent or both; `inf` and `nan` too.
        static func float(_ word: String) -> Double? {
            var body = Substring(word)
            var sign = ""
            if let first = body.first, first == "+" || first == "-" {
                sign = first == "-" ? "-" : ""
                body = body.dropFirst()
            }
            if body == "inf" { return sign == "-" ? -.infinity : .infinity }
            if body == "nan" { return .nan }
            let exponentAt = body.firstIndex { $0 == "e" || $0 == "E" }
            let mantissa = exponentAt.map { body[..<$0] } ?? body
            let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count <= 2, let whole = underscoresBetweenDigits(parts[0]), !whole.isEmpty, whole == "0" || whole.first != "0"
            else { return nil }
            var text = sign + whole
            if parts.count == 2 {
                guard let fraction = underscoresBetweenDigits(parts[1]), !fraction.isEmpty else { return nil }
                text += "." + fraction
            }
            if let exponentAt {
                var exponent = body[body.index(after: exponentAt)...]
                var exponentSign = ""
                if let first = exponent.first, first == "+" || first == "-" {
                    exponentSign = String(first)
                    exponent = exponent.dropFirst()
                }
                guard let digits = underscoresBetweenDigits(exponent), !digits.isEmpty else { return nil }
                text += "e" + exponentSign + digits
            } else if parts.count < 2 {
                return nil  // an integer, not a float
            }
            return Double(text)
        }

        /// The digits with each `_` removed, when every `_` stands between two digits; nil otherwise.
        static func underscoresBetweenDigits(_ text: Substring) -> String? {
            var out = ""
            var previousDigit = false
            var pendingUnderscore = false
            for c in text.unicodeScalars {
                if ("0"..."9").contains(c) {
                    out.unicodeScalars.append(c)
                    previousDigit = true
                    pendingUnderscore = false
                } else if c == "_", previousDigit {
                    previousDigit = false
                    pendingUnderscore = true
                } else {
                    return nil
                }
            }
            return pendingUnderscore ? nil : out
        }

        /// A scalar for a message (control ones as U+XXXX).
        static func shown(_ scalar: Unicode.Scalar?) -> String {
            guard let scalar else { return "end of line" }
            return scalar.value < 0x20 || scalar.value == 0x7F ? "U+\(String(scalar.value, radix: 16, uppercase: true))" : String(scalar)
        }
    }
}
