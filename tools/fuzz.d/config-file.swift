// Fuzz target: the configuration file's TOML subset (ConfigFile.parse, Sources/ScreencastSupport/ConfigFile.swift).
//
// Input: the text of a call.toml / agent.toml (any bytes, decoded as UTF-8 with replacement).
// Properties: never traps; text over ConfigFile.maximumBytes is refused (line 0); an error names a line of the
// text (1…its line count); entries come in line order, with bare keys (A-Za-z0-9_-) each once, and arrays of
// at most maximumArrayElements; every entry written back as `key = value` (strings as basic strings with
// escapes, numbers and booleans bare) parses to the same entry.
import ScreencastSupport

func fuzzOne(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    let lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).count
    let entries: [ConfigFile.Entry]
    do {
        entries = try ConfigFile.parse(text)
    } catch {
        if text.utf8.count > ConfigFile.maximumBytes { check(error.line == 0, "an over-long text refused at line \(error.line)") }
        else { check((1...lines).contains(error.line), "error at line \(error.line) of \(lines)") }
        return
    }
    check(text.utf8.count <= ConfigFile.maximumBytes, "parsed past the size limit")
    var previous = 0
    var keys: Set<String> = []
    for entry in entries {
        check(entry.line > previous && entry.line <= lines, "line \(entry.line) after \(previous)")
        previous = entry.line
        check(!entry.key.isEmpty && entry.key.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-") },
              "key '\(entry.key)'")
        check(keys.insert(entry.key).inserted, "key '\(entry.key)' twice")
        if case .strings(let list) = entry.value { check(list.count <= ConfigFile.maximumArrayElements, "\(list.count) values") }
        let again = try? ConfigFile.parse("\(entry.key) = \(written(entry.value))\n")
        check(again?.count == 1 && (again?[0].value == entry.value || isNaN(entry.value)), "\(entry) written back parses as \(String(describing: again))")
    }
}

func isNaN(_ value: ConfigFile.Value) -> Bool { if case .float(let f) = value { f.isNaN } else { false } }

func written(_ value: ConfigFile.Value) -> String {
    switch value {
    case .string(let text): basic(text)
    case .strings(let list): "[" + list.map(basic).joined(separator: ", ") + "]"
    case .integer(let number): String(number)
    case .float(let number): number.isNaN ? "nan" : number.isInfinite ? (number > 0 ? "inf" : "-inf") : "\(number)"
    case .boolean(let flag): flag ? "true" : "false"
    }
}

func basic(_ text: String) -> String {
    var out = "\""
    for s in text.unicodeScalars {
        switch s {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case _ where s.value < 0x20 || s.value == 0x7F: out += "\\u" + String(repeating: "0", count: 4 - String(s.value, radix: 16).count) + String(s.value, radix: 16)
        default: out.unicodeScalars.append(s)
        }
    }
    return out + "\""
}
