import Foundation

/// A program's settings: its configuration file (``ConfigFile``) under its command line. Each key of the file is
/// an option's long name, checked against the program's own declarations (the option and flag sets its
/// ``CommandLineArguments`` takes): `key = "v"` or `key = 12` is `--key=v`, an array repeats the option,
/// `flag = true` is `--flag` (`false` leaves it off). An option given on the command line replaces the file's
/// (all of a repeatable option's values). `--config FILE` names the file; without it
/// `$XDG_CONFIG_HOME/screencast/PROGRAM.toml` (else `~/.config/screencast/PROGRAM.toml`) is read when it exists.
/// `--print-config` asks for the effective settings (``toml(program:)``).
public struct ProgramSettings: Sendable {
    /// The largest `--config` path, bytes (PATH_MAX).
    public static let maximumPathBytes = 4096

    /// What ``CommandLineArguments`` reads: the file's settings that the command line leaves, as `--key=value`
    /// words, then the command line without `--config` and `--print-config`.
    public let words: [String]
    /// The file read; nil when none.
    public let file: String?
    /// `--print-config` was given.
    public let printConfig: Bool
    /// Each setting taken from the file: its key and line.
    private let origins: [String: Int]
    /// The settings in effect, in order: an option's name and its value (nil for a switch).
    private let effective: [(key: String, value: String?)]

    /// Reads and merges. `options` and `flags` are the program's declarations (as for ``CommandLineArguments``).
    /// - Throws: ``UsageError``: `--config` unreadable or missing, or `FILE:LINE: reason` for a line that breaks
    ///   the TOML subset, an unknown key, a switch given a value or an option given true/false.
    public static func load(
        _ commandLine: [String], program: String, options: Set<String>, flags: Set<String>,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(UsageError) -> ProgramSettings {
        var rest: [String] = []
        var configPath: String?
        var printConfig = false
        var index = 0
        var named: Set<String> = []
        while index < commandLine.count {
            let word = commandLine[index]
            index += 1
            if word == "--" { rest += commandLine[(index - 1)...]; break }
            if word == "--print-config" { printConfig = true; continue }
            if word == "--config" || word.hasPrefix("--config=") {
                if word == "--config" {
                    guard index < commandLine.count else { throw UsageError("option '--config' needs a value") }
                    configPath = commandLine[index]
                    index += 1
                } else {
                    configPath = String(word.dropFirst("--config=".count))
                }
                continue
            }
            if word.hasPrefix("--") { named.insert(String(word.dropFirst(2).prefix { $0 != "=" })) }
            rest.append(word)
        }
        let path: String
        if let configPath {
            guard !configPath.isEmpty, configPath.utf8.count <= maximumPathBytes else { throw UsageError("--config needs a file name") }
            path = configPath
        } else {
            guard let found = defaultPath(program: program, environment: environment), FileManager.default.fileExists(atPath: found) else {
                return ProgramSettings(
                    words: rest, file: nil, printConfig: printConfig, origins: [:], effective: settingsIn(rest, options: options))
            }
            path = found
        }
        let text: String
        do {
            try PathArgument.readableFile(path, option: "--config")
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            guard data.count <= ConfigFile.maximumBytes else { throw UsageError("--config: \(path) is longer than \(ConfigFile.maximumBytes) bytes") }
            guard let decoded = String(data: data, encoding: .utf8) else { throw UsageError("--config: \(path) is not UTF-8 text") }
            text = decoded
        } catch let error as UsageError {
            throw error
        } catch {
            throw UsageError("--config: cannot read \(path): \(error.localizedDescription)")
        }
        let entries: [ConfigFile.Entry]
        do { entries = try ConfigFile.parse(text) } catch { throw UsageError("\(path):\(error.line): \(error.reason)") }
        var words: [String] = []
        var origins: [String: Int] = [:]
        for entry in entries {
            let key = entry.key
            func fail(_ reason: String) -> UsageError { UsageError("\(path):\(entry.line): \(reason)") }
            if ["config", "print-config", "help", "version"].contains(key) { throw fail("'\(key)' is for the command line only") }
            if flags.contains(key) {
                guard case .boolean(let on) = entry.value else { throw fail("'\(key)' is a switch: true or false") }
                if on, !named.contains(key) { words.append("--" + key) }
            } else if options.contains(key) {
                let texts: [String]
                switch entry.value {
                case .string(let text): texts = [text]
                case .strings(let list): texts = list
                case .integer(let number): texts = [String(number)]
                case .float(let number):
                    guard number.isFinite else { throw fail("'\(key)' must be a finite number") }
                    texts = [String(number)]
                case .boolean: throw fail("'\(key)' takes a value (--\(key) VALUE), not true or false")
                }
                if !named.contains(key) { words += texts.map { "--\(key)=\($0)" } }
            } else {
                throw fail("unknown key '\(key)': the program has no option --\(key)")
            }
            origins[key] = entry.line
        }
        return ProgramSettings(
            words: words + rest, file: path, printConfig: printConfig, origins: origins.filter { !named.contains($0.key) },
            effective: settingsIn(words + rest, options: options))
    }

    /// The options `words` set, in order (`--name value` and `--name=value` alike; a switch has no value).
    private static func settingsIn(_ words: [String], options: Set<String>) -> [(key: String, value: String?)] {
        var settings: [(key: String, value: String?)] = []
        var index = 0
        while index < words.count {
            let word = words[index]
            index += 1
            if word == "--" { break }
            guard word.hasPrefix("--") else { continue }
            let body = word.dropFirst(2)
            if let equals = body.firstIndex(of: "=") {
                settings.append((String(body[..<equals]), String(body[body.index(after: equals)...])))
            } else if options.contains(String(body)), index < words.count {
                settings.append((String(body), words[index]))
                index += 1
            } else {
                settings.append((String(body), nil))
            }
        }
        return settings
    }

    /// `$XDG_CONFIG_HOME/screencast/PROGRAM.toml` when that variable is an absolute path, else
    /// `$HOME/.config/screencast/PROGRAM.toml`; nil without either.
    public static func defaultPath(program: String, environment: [String: String]) -> String? {
        if let base = environment["XDG_CONFIG_HOME"], base.hasPrefix("/") { return base + "/screencast/\(program).toml" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.config/screencast/\(program).toml" }
        return nil
    }

    /// `error` with the file and line in front when the option it names (`--name …` at its start) was set by the
    /// file: `call.toml:3: --bitrate must be a whole number from 1 to 1000000, not '0'`.
    public func attributed(_ error: UsageError) -> UsageError {
        guard let file, error.reason.hasPrefix("--") else { return error }
        let name = String(error.reason.dropFirst(2).prefix { $0.isLetter || $0.isNumber || $0 == "-" })
        guard let line = origins[name] else { return error }
        return UsageError("\(file):\(line): \(error.reason)")
    }

    /// The effective settings as a file this program reads back (`--print-config`): every option set by the file
    /// or the command line, in order, a repeated one as an array; numbers bare, other values quoted.
    public func toml(program: String) -> String {
        var order: [String] = []
        var values: [String: [String]] = [:]
        for (key, value) in effective {
            if !order.contains(key) { order.append(key) }
            if let value { values[key, default: []].append(value) }
        }
        var text = "# \(program): the effective settings (\(file ?? "no file"), then the command line); every other option has its\n"
            + "# default (--help)\n"
        for key in order {
            if values[key] == nil { text += "\(key) = true\n"; continue }
            let list = values[key] ?? []
            text += list.count == 1 ? "\(key) = \(Self.tomlValue(list[0]))\n" : "\(key) = [\(list.map(Self.quoted).joined(separator: ", "))]\n"
        }
        return text
    }

    private static func tomlValue(_ text: String) -> String {
        if ConfigFile.Reader.integer(text) != nil { return text }
        if let number = ConfigFile.Reader.float(text), number.isFinite { return text }
        return quoted(text)
    }

    /// A TOML basic string (§String): `"` and `\` escaped, control characters as \uXXXX.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for s in text.unicodeScalars {
            switch s {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case _ where s.value < 0x20 || s.value == 0x7F:
                let hex = String(s.value, radix: 16, uppercase: true)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(s)
            }
        }
        return out + "\""
    }
}
