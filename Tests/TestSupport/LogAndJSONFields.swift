import Foundation

/// `key=value` from a log line (values without spaces), as the tools log (`level component message k=v…`).
public func field(_ key: String, in line: String) -> String? {
    for word in line.split(separator: " ") where word.hasPrefix(key + "=") {
        return String(word.dropFirst(key.count + 1))
    }
    return nil
}

/// The integer at `path` in a JSON object (e.g. `number(stats, "frames", "received")` of `/stats`).
public func number(_ object: [String: Any], _ path: String...) -> Int? {
    var current: Any? = object
    for key in path { current = (current as? [String: Any])?[key] }
    return (current as? NSNumber)?.intValue
}
