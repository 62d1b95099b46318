import Foundation
import Glibc

/// A tmpfs of a few KiB mounted for one test (as root), so that a recording fills it partway through and
/// gets ENOSPC at a point of the run, not at its first write as `/dev/full` gives it.
public struct SmallDisk {
    /// The mount point.
    public let path: String

    /// Creates `path` and mounts a tmpfs of `kibibytes` there (mode 0700).
    /// - Throws: ``SmallDiskError`` without root or when `mount` fails.
    public init(at path: String, kibibytes: Int) throws {
        guard getuid() == 0 else { throw SmallDiskError(reason: "mounting a small tmpfs needs root; run the tests as root") }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let result = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/mount"), ["-t", "tmpfs", "-o", "size=\(kibibytes)k,mode=0700", "tmpfs", path], timeout: 10)
        guard result.status == 0 else { throw SmallDiskError(reason: "mount -t tmpfs at \(path) failed: \(result.stderr)") }
        self.path = path
    }

    /// Unmounts (lazily, so a file still open elsewhere does not keep it).
    public func unmount() {
        _ = try? ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/umount"), ["-l", path], timeout: 10)
    }
}

public struct SmallDiskError: Error, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
}
