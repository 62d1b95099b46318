/// A JSON value with objects that keep their key order, for machine-readable output whose layout is
/// documented (`inspect --json`, stats). Serialised compactly per RFC 8259.
public indirect enum JSONValue: Sendable, Equatable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
    case null
    case bool(Bool)
    case int(Int64)
    /// An unsigned integer, written exactly (u64 timestamps and counters above `Int64.max` too).
    case uint(UInt64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    /// Keys in output order.
    case object([(String, JSONValue)])

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(Int64(value)) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }

    /// An integer value, written exactly (a negative one as `.int`, others beyond `Int64` as `.uint`).
    public static func number<T: BinaryInteger>(_ value: T) -> JSONValue {
        if let exact = Int64(exactly: value) { return .int(exact) }
        if let exact = UInt64(exactly: value) { return .uint(exact) }
        return .double(Double(value))
    }

    /// The compact serialisation.
    public var serialized: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)
        case .uint(let value): out += String(value)
        case .double(let value): out += value.isFinite ? String(value) : "null"
        case .string(let value): JSONValue.writeString(value, to: &out)
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.write(to: &out)
            }
            out += "]"
        case .object(let pairs):
            out += "{"
            for (index, (key, value)) in pairs.enumerated() {
                if index > 0 { out += "," }
                JSONValue.writeString(key, to: &out)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }

    private static func writeString(_ value: String, to out: inout String) {
        out += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }

    public static func == (a: JSONValue, b: JSONValue) -> Bool { a.serialized == b.serialized }
}

extension JSONValue {
    /// The number it holds (`.int`, `.uint` or `.double`), as a Double; nil for anything else.
    public var numberValue: Double? {
        switch self {
        case .int(let n): Double(n)
        case .uint(let n): Double(n)
        case .double(let n): n
        default: nil
        }
    }

    /// The text it holds; nil for anything but `.string`.
    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }

    /// An object's fields by key (the first of a repeated key); empty for anything but `.object`.
    public var fields: [String: JSONValue] {
        if case .object(let o) = self { Dictionary(o, uniquingKeysWith: { first, _ in first }) } else { [:] }
    }

    /// An object's first field named `key`; nil for anything but an object that has one.
    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { o.first { $0.0 == key }?.1 } else { nil }
    }
}
