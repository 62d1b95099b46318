import Glibc

/// Checks of a file named on the command line, made before any work starts, so that a path the user can fix
/// by changing the command line is bad usage (``UsageError``, exit 64) and never a runtime failure found
/// half-way (the shared exit-code rule: README, "Exit codes"). What can still fail later (a full disk, a file
/// removed while running) stays a runtime failure (exit 1).
///
/// Each check asks the kernel (`stat(2)`, `access(2)`) and names the option and the path the user gave.
public enum PathArgument {
    /// A file to read: it exists, is not a folder, and this process may read it.
    /// - Throws: ``UsageError`` `"--OPTION: 'PATH' does not exist"` (or is a folder, or cannot be read: the
    ///   `strerror` text).
    public static func readableFile(_ path: String, option: String) throws(UsageError) {
        try noNUL(path, option: option)
        var info = stat()
        guard stat(path, &info) == 0 else { throw UsageError("\(option): '\(path)': \(SystemErrorText.of())") }
        if info.st_mode & S_IFMT == S_IFDIR { throw UsageError("\(option): '\(path)' is a folder, not a file") }
        guard access(path, R_OK) == 0 else { throw UsageError("\(option): '\(path)' cannot be read: \(SystemErrorText.of())") }
    }

    /// A file to create or replace: its folder exists, is a folder and is writable, and the path itself is
    /// not a folder. Nothing is created.
    /// - Throws: ``UsageError`` `"--OPTION: folder 'DIR' does not exist"` (or is not a folder, or is not writable).
    public static func writableFile(_ path: String, option: String) throws(UsageError) {
        try noNUL(path, option: option)
        let folder = Self.folder(of: path)
        var info = stat()
        guard stat(folder, &info) == 0 else {
            throw UsageError(errno == ENOENT ? "\(option): folder '\(folder)' does not exist (for '\(path)')"
                : "\(option): folder '\(folder)': \(SystemErrorText.of())")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw UsageError("\(option): '\(folder)' is not a folder (for '\(path)')") }
        guard access(folder, W_OK | X_OK) == 0 else {
            throw UsageError("\(option): folder '\(folder)' is not writable: \(SystemErrorText.of())")
        }
        if stat(path, &info) == 0 {
            if info.st_mode & S_IFMT == S_IFDIR { throw UsageError("\(option): '\(path)' is a folder") }
            // An existing character device (/dev/null, /dev/full) or file must be writable itself.
            guard access(path, W_OK) == 0 else { throw UsageError("\(option): '\(path)' is not writable: \(SystemErrorText.of())") }
        }
    }

    /// A path with a NUL byte names another file than it says (the kernel stops at the NUL: `out\0.mp4` is `out`).
    static func noNUL(_ path: String, option: String) throws(UsageError) {
        if path.utf8.contains(0) { throw UsageError("\(option): the path contains a NUL byte") }
    }

    /// The folder part of `path`: everything before the last `/` (`/` for `/x`, `.` without a slash).
    public static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let folder = String(path[..<slash])
        return folder.isEmpty ? "/" : folder
    }
}
