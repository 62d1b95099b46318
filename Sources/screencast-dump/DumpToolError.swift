import FrameSocket
import FrameWire
import Foundation
import ScreencastSupport

/// Errors of the dump tool that are not bad usage. Each prints as one line, `PATH: reason`, where the reason
/// of a failed system call is its `strerror` text.
enum DumpToolError: Error, CustomStringConvertible {
    /// A file, folder or socket could not be used (path, reason).
    case io(String, String)
    /// A path named on the command line that cannot be used as asked, found before any work (path, reason):
    /// a missing or unreadable input, a folder given as a dump, an output whose folder is missing. Bad
    /// usage (exit 64): the command line must change.
    case unusablePath(String, String)
    /// No reader accepted the connection in time (socket path, seconds waited).
    case noReader(String, Double)
    /// Replay ended with frames lost or not delivered (socket path, why: a ``ReplayFailure``).
    case replayFailed(String, ReplayFailure)
    /// The recorded sender's stream did not end cleanly (socket path, why).
    case recordedStreamEnded(String, String)

    var description: String {
        switch self {
        case .io(let path, let reason), .unusablePath(let path, let reason): "\(path): \(reason)"
        case .noReader(let path, let seconds): "\(path): no reader at this socket after \(Format.seconds(seconds)) s"
        case .replayFailed(let path, let failure): "\(path): \(failure)"
        case .recordedStreamEnded(let path, let reason): "\(path): \(reason)"
        }
    }

    /// `PATH: strerror(errno)` for the current `errno`.
    static func system(_ path: String, _ code: Int32 = errno) -> DumpToolError { .io(path, SystemErrorText.of(code)) }


    /// A socket-layer error as `PATH: reason`, without repeating the path inside the reason.
    static func socket(_ path: String, _ error: FrameSocketError) -> DumpToolError {
        switch error {
        case .systemCall(let name, let code, _): .io(path, "\(name) failed: \(SystemErrorText.of(code))")
        case .inUse: .io(path, "in use by a live server (another record or call process?)")
        case .notASocket: .io(path, "exists and is not a socket; not replacing it")
        case .notADirectory(let folder): .io(folder, "not a folder")
        default: .io(path, error.description)
        }
    }
}

/// Why a replay exits 1 although it ran: printed as its one error line.
enum ReplayFailure: CustomStringConvertible {
    /// The reader disconnected and did not come back within `--wait` seconds.
    case readerGone(dropped: Int, offered: Int, waited: Double)
    /// The reader disconnected while the last frames were sent, so they were lost.
    case readerLeft(dropped: Int, offered: Int)
    /// The reader stayed connected but did not take the last frame within `--wait` seconds.
    case flushTimedOut(dropped: Int, offered: Int, waited: Double)

    var description: String {
        switch self {
        case .readerGone(let dropped, let offered, let waited):
            "the reader went away and did not come back within \(Format.seconds(waited)) s; "
                + "\(dropped) of \(offered) frames dropped"
        case .readerLeft(let dropped, let offered):
            "the reader went away; \(dropped) of \(offered) frames dropped"
        case .flushTimedOut(let dropped, let offered, let waited):
            "the reader did not take the last frame within \(Format.seconds(waited)) s (it stopped reading?); "
                + "\(dropped) of \(offered) frames dropped"
        }
    }
}
