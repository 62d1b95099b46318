/// A writer of the Prometheus text exposition format, version 0.0.4 (prometheus.io/docs/instrumenting/
/// exposition_formats, "Text-based format"): for each metric family a `# HELP` and a `# TYPE` line, then its
/// samples, one a line:
///
///     # HELP screencast_frames_dropped_total Frames that did not become an encoded frame, by reason.
///     # TYPE screencast_frames_dropped_total counter
///     screencast_frames_dropped_total{reason="stale"} 12
///
/// Names follow the format's grammar (metric `[a-zA-Z_:][a-zA-Z0-9_:]*`, label `[a-zA-Z_][a-zA-Z0-9_]*`, never
/// `__…`); label values are escaped (`\` → `\\`, `"` → `\"`, line feed → `\n`), HELP text likewise (`\` and
/// line feed); values are Go-float text (`+Inf`, `-Inf`, `NaN`; whole numbers without a fraction). A family's
/// samples follow its header, and a family is written once, as the format requires.
///
/// Names are the program's own constants, never input: a malformed name or a family written twice is a
/// programming error and stops the program (`precondition`); label values may be anything (a viewer's id, an
/// output's state) and are escaped.
public struct MetricsText: Sendable {
    /// The type of a metric family (`# TYPE`).
    public enum Kind: String, Sendable {
        case counter, gauge, summary, histogram, untyped
    }

    /// The `Content-Type` of a scrape's answer.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The text so far (ends with a line feed once anything is written).
    public private(set) var text = ""
    private var written: Set<String> = []
    /// The family whose samples are being written, and its type.
    private var current: (name: String, kind: Kind)?

    public init() {}

    /// Starts a family: its `# HELP` and `# TYPE` lines. Its samples (``sample(_:_:_:)``) come next.
    public mutating func family(_ name: String, _ kind: Kind, help: String) {
        precondition(Self.isMetricName(name), "metric name '\(name)' breaks the format's grammar")
        precondition(!written.contains(name), "metric family '\(name)' written twice")
        written.insert(name)
        current = (name, kind)
        text += "# HELP \(name) \(Self.escapedHelp(help))\n# TYPE \(name) \(kind.rawValue)\n"
    }

    /// One sample of the current family: `name` is the family's name, or for a summary or histogram the family's
    /// name with `_sum`, `_count` or (histogram) `_bucket`.
    public mutating func sample(_ name: String, _ labels: KeyValuePairs<String, String> = [:], _ value: Double) {
        sample(name, labels.map { ($0.key, $0.value) }, value)
    }

    /// As ``sample(_:_:_:)-(_,KeyValuePairs<String,String>,_)`` with labels made at run time, in order.
    public mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Double) {
        guard let current else { preconditionFailure("sample '\(name)' before any family") }
        let suffixes: [String] = switch current.kind {
        case .summary: ["", "_sum", "_count"]
        case .histogram: ["_bucket", "_sum", "_count"]
        default: [""]
        }
        precondition(suffixes.contains { current.name + $0 == name }, "sample '\(name)' outside its family '\(current.name)'")
        text += name
        if !labels.isEmpty {
            text += "{"
            for (index, (label, value)) in labels.enumerated() {
                precondition(Self.isLabelName(label), "label name '\(label)' breaks the format's grammar")
                text += (index == 0 ? "" : ",") + label + "=\"" + Self.escapedLabelValue(value) + "\""
            }
            text += "}"
        }
        text += " " + Self.formatted(value) + "\n"
    }

    /// A family of one sample without labels.
    public mutating func single(_ name: String, _ kind: Kind, help: String, _ value: Double) {
        family(name, kind, help: help)
        sample(name, [:], value)
    }

    /// A summary family: one sample per quantile (`quantile` label, 0…1), then `_sum` and `_count`, each with
    /// `labels` first. Quantiles that are nil (no observation yet) are written as `NaN`, as client libraries do.
    public mutating func summarySamples(
        _ name: String, _ labels: [(String, String)] = [], quantiles: [(Double, Double?)], sum: Double, count: Double
    ) {
        for (quantile, value) in quantiles {
            var all = labels
            all.append(("quantile", Self.formatted(quantile)))
            sample(name, all, value ?? .nan)
        }
        sample(name + "_sum", labels, sum)
        sample(name + "_count", labels, count)
    }

    // MARK: The format's rules

    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`.
    public static func isMetricName(_ name: String) -> Bool {
        guard let first = name.utf8.first, isLetter(first) || first == UInt8(ascii: "_") || first == UInt8(ascii: ":") else { return false }
        return name.utf8.allSatisfy { isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ":") }
    }

    /// `[a-zA-Z_][a-zA-Z0-9_]*`, not starting with `__` (reserved for Prometheus's own labels).
    public static func isLabelName(_ name: String) -> Bool {
        guard let first = name.utf8.first, isLetter(first) || first == UInt8(ascii: "_"), !name.hasPrefix("__") else { return false }
        return name.utf8.allSatisfy { isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "_") }
    }

    /// A label value as written between its quotes: `\` → `\\`, `"` → `\"`, line feed → `\n`.
    public static func escapedLabelValue(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") || $0 == 0x0A }) else { return value }
        var escaped = ""
        for character in value.unicodeScalars {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// HELP text: `\` → `\\`, line feed → `\n` (quotes stay).
    public static func escapedHelp(_ help: String) -> String {
        var escaped = ""
        for character in help.unicodeScalars {
            switch character {
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// A value as Go's `strconv.ParseFloat` reads it: whole numbers below 2^53 without a fraction, `+Inf`,
    /// `-Inf`, `NaN`, others in Swift's shortest round-trip form (`0.25`, `1e-05`).
    public static func formatted(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 { return String(Int64(value)) }
        return String(value)
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }
}
