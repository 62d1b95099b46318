import Foundation
import Glibc

/// Reads a pipe with read(2), retrying EINTR. Foundation's `FileHandle.availableData` and
/// `readDataToEndOfFile()` call `fatalError` on any read error, EINTR included: a signal to the test
/// process while a reader thread waited (a rehearsal's Chromium test, 2026-12-05) took the whole test
/// process down ("Interrupted system call").
public enum POSIXPipeRead {
    /// The next bytes from `fd` (at most `capacity`), waiting for them; nil at end of file or on an error
    /// other than EINTR.
    public static func chunk(_ fd: Int32, capacity: Int = 64 * 1024) -> Data? {
        var buffer = [UInt8](repeating: 0, count: capacity)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, capacity) }
            if count > 0 { return Data(buffer[0..<count]) }
            if count < 0, errno == EINTR { continue }
            return nil
        }
    }

    /// Everything until end of file (or a read error other than EINTR).
    public static func toEnd(_ fd: Int32) -> Data {
        var data = Data()
        while let chunk = chunk(fd) { data.append(chunk) }
        return data
    }
}
