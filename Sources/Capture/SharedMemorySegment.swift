internal import CXCB
import Glibc

/// The one owner of a System V shared-memory segment attached both here and in the X server (MIT-SHM), so
/// `ShmGetImage` writes pixels straight into this process's memory (the copy happens in the server).
///
/// The segment is marked for removal (`IPC_RMID`) as soon as both sides are attached, so it disappears
/// with the last detach even if this process dies. `deinit` detaches from the server and from this process.
final class SharedMemorySegment {
    /// The X id of the segment.
    let segment: xcb_shm_seg_t
    /// Bytes in the segment.
    let size: Int
    /// The segment mapped into this process.
    let address: UnsafeMutableRawPointer
    private let connection: XConnection

    /// Creates a segment of `size` bytes and attaches it to the server.
    /// - Throws: ``CaptureError/systemCall(name:errno:)`` when `shmget`/`shmat` fail, or
    ///   ``CaptureError/requestFailed(request:errorCode:)`` when the server cannot attach it (a remote
    ///   display, another IPC namespace, another user).
    init(connection: XConnection, size: Int) throws(CaptureError) {
        let id = shmget(0 /* IPC_PRIVATE */, size, IPC_CREAT | 0o600)
        guard id >= 0 else { throw .systemCall(name: "shmget", errno: errno) }
        guard let mapped = shmat(id, nil, 0), mapped != UnsafeMutableRawPointer(bitPattern: -1) else {
            let code = errno
            shmctl(id, IPC_RMID, nil)
            throw .systemCall(name: "shmat", errno: code)
        }
        let segment = connection.generateID()
        do {
            try connection.check("ShmAttach", xcb_shm_attach_checked(connection.handle, segment, UInt32(id), 0))
        } catch {
            shmdt(mapped)
            shmctl(id, IPC_RMID, nil)
            throw error
        }
        shmctl(id, IPC_RMID, nil)
        self.segment = segment
        self.size = size
        self.address = mapped
        self.connection = connection
    }

    deinit {
        xcb_shm_detach(connection.handle, segment)
        connection.flush()
        shmdt(address)
    }
}
