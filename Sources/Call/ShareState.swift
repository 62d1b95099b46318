import DTLS
import Foundation
import Glibc
public import ScreencastSupport
public import Signaling

/// What a `--share` call keeps across restarts, so that a restart does not strand its viewers (issue 34: a new
/// token and a new self-signed certificate at every start left open pages looping on 401): the token and the
/// HTTPS identity, each in a file of mode 0600 in a folder of mode 0700.
///
/// The folder is `$XDG_STATE_HOME/screencast`, else `$HOME/.local/state/screencast` (XDG Base Directory
/// Specification 0.8, "state data"). Files: `share-token` (the token, one line), `share-certificate.pem` and
/// `share-key.pem` (PKCS #8, unencrypted). A file of another user or that others may read, a weak token, one
/// that does not parse (an encrypted key too: no pass-phrase prompt), or a certificate that expires within
/// ``renewalSeconds`` is replaced by a new one (logged); a folder that is not this user's alone is neither
/// read nor written, and one that cannot be written leaves the call with values of this run only (logged,
/// never fatal).
public struct ShareState: Sendable {
    /// The folder the files live in.
    public let folder: String
    /// Validity of a certificate made here, days (a year: it is kept).
    public static let validityDays = 365
    /// A kept certificate closer than this to its expiry is replaced at start, s (7 days).
    public static let renewalSeconds = 7 * 86_400

    /// The state kept in `folder` (an absolute path; made 0700 when first written, see ``defaultFolder(environment:)``).
    public init(folder: String) { self.folder = folder }

    /// The default folder for `environment` (`XDG_STATE_HOME`, else `HOME`), nil when neither is set.
    public static func defaultFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/screencast" }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return home + "/.local/state/screencast"
    }

    /// The kept token, or a new one (written for the next start) when there is none, it is unusable, or `fresh`.
    /// Returns the token and whether it was kept from an earlier run.
    public func token(fresh: Bool, logger: Logger) -> (token: String, kept: Bool) {
        let path = folder + "/share-token"
        let usable = usableFolder(logger: logger)
        if usable, !fresh, let text = read(path, logger: logger) {
            let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if Self.isStrongToken(token) { return (token, true) }
            logger.warning("kept share token unusable (16-256 URL-safe characters): making a new one", ["path": path])
        }
        let token = ShareLinks.freshToken()
        if usable { write(token + "\n", to: path, logger: logger) }
        return (token, false)
    }

    /// A token worth keeping: 16-256 characters of the URL-safe alphabet (RFC 3986 unreserved), as
    /// ``ShareLinks/freshToken()`` makes them (32). A one-letter file, or 40 kB that every request would carry
    /// (libmicrohttpd answers 414), is replaced.
    public static func isStrongToken(_ token: String) -> Bool {
        (16...256).contains(token.utf8.count)
            && token.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || [0x2D, 0x5F, 0x2E, 0x7E].contains($0) }
    }

    /// The folder is ours alone, or does not exist yet (it is then made 0700): owned by this user and not open to
    /// group or others. A folder others may write could hold a token they chose: it is not used at all (logged;
    /// the call then runs with values of this run only).
    private func usableFolder(logger: Logger) -> Bool {
        var info = stat()
        guard lstat(folder, &info) == 0 else { return true }
        guard info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid(), info.st_mode & 0o077 == 0 else {
            logger.warning("share state folder not private (not a folder of this user with mode 0700): nothing kept or read", [
                "folder": folder,
            ])
            return false
        }
        return true
    }

    /// The kept HTTPS identity, or a new one (written for the next start) when there is none, it does not parse,
    /// or it expires within ``renewalSeconds``. Returns it and whether it was kept.
    /// - Throws: ``DTLSError`` when a new certificate cannot be made.
    public func identity(logger: Logger) throws(DTLSError) -> (identity: TLSIdentity, kept: Bool) {
        let certificatePath = folder + "/share-certificate.pem", keyPath = folder + "/share-key.pem"
        let usable = usableFolder(logger: logger)
        if usable, let certificateText = read(certificatePath, logger: logger), let keyText = read(keyPath, logger: logger) {
            do {
                let certificate = try DTLSCertificate.fromPEM(certificate: certificateText, privateKey: keyText)
                if certificate.secondsUntilExpiry > Self.renewalSeconds {
                    return (TLSIdentity(certificatePEM: certificateText, privateKeyPEM: keyText, fingerprint: certificate.fingerprint.value), true)
                }
                logger.info("kept share certificate expires soon: making a new one", ["path": certificatePath])
            } catch {
                logger.warning("kept share certificate unusable: making a new one", ["path": certificatePath, "reason": error])
            }
        }
        let certificate = try DTLSCertificate.generate(commonName: "screencast", validityDays: Self.validityDays)
        let identity = TLSIdentity(
            certificatePEM: try certificate.certificatePEM(), privateKeyPEM: try certificate.privateKeyPEM(),
            fingerprint: certificate.fingerprint.value)
        // The key first: a certificate on disk without its key would be replaced at the next start anyway.
        if usable, write(identity.privateKeyPEM, to: keyPath, logger: logger) {
            write(identity.certificatePEM, to: certificatePath, logger: logger)
        }
        return (identity, false)
    }

    /// The file's text when it exists, is a regular file only its owner may read or write (mode & 077 == 0), and
    /// is at most 64 KiB; nil otherwise (logged when it exists but is refused).
    private func read(_ path: String, logger: Logger) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        guard info.st_mode & S_IFMT == S_IFREG, info.st_uid == getuid(), info.st_mode & 0o077 == 0, info.st_size <= 65_536 else {
            logger.warning("kept share file refused (not a private regular file of this user): making a new one", ["path": path])
            return nil
        }
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// Writes `text` to `path` as a new file of mode 0600 (written beside, then renamed over), making the folder
    /// (0700) first. False (logged) when it cannot.
    @discardableResult
    private func write(_ text: String, to path: String, logger: Logger) -> Bool {
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            logger.warning("share state not kept: cannot make its folder", ["folder": folder, "reason": error.localizedDescription])
            return false
        }
        let temporary = path + ".new"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            logger.warning("share state not kept", ["path": path, "reason": String(cString: strerror(errno))])
            return false
        }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == bytes.count, synced, rename(temporary, path) == 0 else {
            logger.warning("share state not kept", ["path": path, "reason": String(cString: strerror(errno))])
            unlink(temporary)
            return false
        }
        return true
    }
}
