import Glibc

/// The text of a failed system call's error code, for error messages and logs.
public enum SystemErrorText {
    /// `strerror(3)` of `code` (default: the calling thread's `errno` at the call), e.g. "No such file or
    /// directory"; "error N" for a code the C library has no text for.
    public static func of(_ code: Int32 = errno) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }
}
