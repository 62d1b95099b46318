import Foundation

/// Where things are, for tests: the package root and the folders of byte-stream cases.
public enum TestPaths {
    /// The package root (found from this file's path: Tests/TestSupport/WireCases.swift).
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `../shared/cases` beside the checkout (or `$SCREENCAST_CASES`): the handed cases.
    public static var sharedCases: URL {
        if let override = ProcessInfo.processInfo.environment["SCREENCAST_CASES"] {
            return URL(fileURLWithPath: override)
        }
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared/cases")
    }

    /// `Protocol/golden`: the golden streams of the wire spec.
    public static var golden: URL { packageRoot.appendingPathComponent("Protocol/golden") }

    /// The inputs `tools/fuzz` found for `target` (`Tests/Fixtures/fuzz/TARGET/`), sorted by name; each is
    /// replayed by the fuzz target and checked by a regression test of its module.
    public static func fuzzRegressions(_ target: String) throws -> [URL] {
        let folder = packageRoot.appendingPathComponent("Tests/Fixtures/fuzz/\(target)")
        return try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    /// The folder holding the built products (the test bundle sits beside the executables).
    public static var productsDirectory: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }

    /// A built executable of this package, e.g. `screencast-dump`.
    public static func executable(_ name: String) -> URL { productsDirectory.appendingPathComponent(name) }
}

/// One expected frame of a case (`NAME.expect.json`, see ../shared/cases/README.md).
public struct ExpectedFrame: Equatable, CustomStringConvertible {
    public var offset: Int
    public var contentLength: Int
    public var bufferWidth: Int
    public var bufferHeight: Int
    public var orientation: Int
    public var rotation: Int
    /// The JPEG's own size, or nil when `decodeError` is expected.
    public var jpegWidth: Int?
    public var jpegHeight: Int?
    public var decodeError: Bool
    /// `Buffer-Timestamp` / `Buffer-Sequence`, present in golden streams of our agent only.
    public var timestamp: UInt64?
    public var sequence: UInt64?
    /// `Buffer-Format` as read: `JPEG` (also when the expectation has no `format`) or `I420`. I420 frames
    /// have neither `jpegWidth`/`jpegHeight` nor `decodeError`.
    public var format: String
    /// The YCbCr range of an I420 body (`Buffer-Color-Range`, `full` when the expectation or the stream has
    /// none); nil for JPEG frames (JFIF: always full).
    public var colorRange: String?
    /// `Buffer-Memory` of a `BGRX-SHM` frame: generation, slot, version; nil for other formats.
    public var memory: [Int]?
    /// The `Capture-*` values by field name (frame-wire.md §2.7), in golden streams of our agent; empty: none.
    public var capture: [String: String] = [:]
    /// `Buffer-Damage` (frame-wire.md §2.9) as `[x, y, w, h]` lists (`[]`: `none`); nil: absent or malformed.
    public var damage: [[Int]]?
    /// The kind of a malformed `Buffer-Damage` (`syntax`, `outsideBuffer`, …); nil when absent or good.
    public var damageFault: String?

    public init(
        offset: Int, contentLength: Int, bufferWidth: Int, bufferHeight: Int, orientation: Int, rotation: Int,
        jpegWidth: Int?, jpegHeight: Int?, decodeError: Bool, timestamp: UInt64? = nil, sequence: UInt64? = nil,
        format: String = "JPEG", colorRange: String? = nil, memory: [Int]? = nil
    ) {
        self.memory = memory
        self.format = format
        self.colorRange = colorRange ?? (format == "I420" ? "full" : nil)
        self.offset = offset
        self.contentLength = contentLength
        self.bufferWidth = bufferWidth
        self.bufferHeight = bufferHeight
        self.orientation = orientation
        self.rotation = rotation
        self.jpegWidth = jpegWidth
        self.jpegHeight = jpegHeight
        self.decodeError = decodeError
        self.timestamp = timestamp
        self.sequence = sequence
    }

    /// The same frame with this damage and fault kind.
    public func withDamage(_ damage: [[Int]]?, fault: String?) -> ExpectedFrame {
        var copy = self
        copy.damage = damage
        copy.damageFault = fault
        return copy
    }

    /// The same frame with these `Capture-*` values.
    public func withCapture(_ fields: [String: String]) -> ExpectedFrame {
        var copy = self
        copy.capture = fields
        return copy
    }

    public var description: String {
        "offset=\(offset) len=\(contentLength) \(bufferWidth)x\(bufferHeight) o=\(orientation) r=\(rotation) "
            + (format != "JPEG" ? "format=\(format) range=\(colorRange ?? "-")" : decodeError ? "decodeError" : "jpeg=\(jpegWidth ?? -1)x\(jpegHeight ?? -1)")
    }
}

/// A byte stream with its expected reading: a handed case or a golden stream.
public struct WireCase: CustomStringConvertible {
    public var name: String
    public var bytes: [UInt8]
    public var frames: [ExpectedFrame]
    /// `eof`, `truncated` or `error`.
    public var end: String
    /// The error kind when `end` is `error`.
    public var errorKind: String?
    /// True for golden streams whose bytes our encoder must reproduce exactly.
    public var canonical: Bool
    public var sha256: String?
    public var description: String { name }

    /// Loads every `NAME.frames` with its `NAME.expect.json` from `folder`; throws when the folder is
    /// missing or holds no case (a test must never pass by finding nothing).
    public static func load(from folder: URL) throws -> [WireCase] {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".frames") }
            .map { String($0.dropLast(".frames".count)) }
            .sorted()
        guard !names.isEmpty else { throw CaseError.noCases(folder.path) }
        return try names.map { try load(name: $0, from: folder) }
    }

    public static func load(name: String, from folder: URL) throws -> WireCase {
        let bytes = try [UInt8](Data(contentsOf: folder.appendingPathComponent(name + ".frames")))
        let json = try Data(contentsOf: folder.appendingPathComponent(name + ".expect.json"))
        guard let root = try JSONSerialization.jsonObject(with: json) as? [String: Any],
              let frameList = root["frames"] as? [[String: Any]],
              let end = root["end"] as? String
        else { throw CaseError.malformed(name) }
        let frames = try frameList.map { f -> ExpectedFrame in
            func int(_ key: String) throws -> Int {
                guard let value = f[key] as? Int else { throw CaseError.malformed("\(name): \(key)") }
                return value
            }
            return ExpectedFrame(
                offset: try int("offset"), contentLength: try int("contentLength"),
                bufferWidth: try int("bufferWidth"), bufferHeight: try int("bufferHeight"),
                orientation: try int("orientation"), rotation: try int("rotation"),
                jpegWidth: f["jpegWidth"] as? Int, jpegHeight: f["jpegHeight"] as? Int,
                decodeError: (f["decodeError"] as? Bool) ?? (f["decodeError"] is String),
                timestamp: (f["timestamp"] as? NSNumber)?.uint64Value,
                sequence: (f["sequence"] as? NSNumber)?.uint64Value,
                format: (f["format"] as? String) ?? "JPEG", colorRange: f["colorRange"] as? String,
                memory: f["memory"] as? [Int])
                .withCapture(f["capture"] as? [String: String] ?? [:])
                .withDamage(f["damage"] as? [[Int]], fault: f["damageFault"] as? String)
        }
        let errorKind = (root["error"] as? [String: Any])?["kind"] as? String
        return WireCase(
            name: name, bytes: bytes, frames: frames, end: end, errorKind: errorKind,
            canonical: (root["canonical"] as? Bool) ?? false, sha256: root["sha256"] as? String)
    }

    public enum CaseError: Error, CustomStringConvertible {
        case noCases(String)
        case malformed(String)
        public var description: String {
            switch self {
            case .noCases(let path): "no .frames cases in \(path)"
            case .malformed(let what): "malformed expect.json: \(what)"
            }
        }
    }
}
