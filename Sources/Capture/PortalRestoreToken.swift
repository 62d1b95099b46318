import Foundation
import Glibc

/// Where the portal's restore token is kept between runs (persist_mode 2: "until the user revokes it"), so the
/// second share of the same screen starts without the chooser: `$XDG_STATE_HOME/screencast/portal-restore-token`
/// (else `~/.local/state/screencast/…`), the folder 0700 and the file 0600, written whole (a temporary file
/// renamed over it). The portal returns a token with every started session (the specification makes them single-use; xdg-desktop-
/// portal 1.16 with xdpw 0.7 returns the same one): whatever it returned is saved in place of the old.
public struct PortalRestoreToken: Sendable, Equatable {
    /// The file.
    public let path: String

    public init(path: String) { self.path = path }

    /// The default place for `environment`; nil when neither `XDG_STATE_HOME` nor `HOME` is set.
    public static func defaultLocation(environment: [String: String]) -> PortalRestoreToken? {
        let base: String
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            base = state
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            base = home + "/.local/state"
        } else {
            return nil
        }
        return PortalRestoreToken(path: base + "/screencast/portal-restore-token")
    }

    /// The saved token, or nil (none, unreadable, empty).
    public func load() -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return token.isEmpty || token.contains("\n") ? nil : token
    }

    /// Saves `token` (0600, its folder 0700).
    /// - Throws: ``CaptureError/systemCall(name:errno:)`` naming the failing call.
    public func save(_ token: String) throws(CaptureError) {
        let folder = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw .systemCall(name: "mkdir \(folder)", errno: EACCES)
        }
        let temporary = path + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .systemCall(name: "open \(temporary)", errno: errno) }
        _ = fchmod(fd, 0o600)  // an old file of another mode keeps its mode through O_TRUNC
        let bytes = Array((token + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let writeErrno = errno
        close(fd)
        guard written == bytes.count else {
            unlink(temporary)
            throw .systemCall(name: "write \(temporary)", errno: writeErrno)
        }
        guard rename(temporary, path) == 0 else { throw .systemCall(name: "rename \(temporary)", errno: errno) }
    }

    /// Drops the saved token (`--forget-portal-choice`): the next session asks again.
    /// - Returns: whether there was one.
    @discardableResult
    public func forget() -> Bool { unlink(path) == 0 }
}
