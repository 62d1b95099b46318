import Foundation
import Glibc

/// Starts the module's blocking loops on threads of their own (Foundation `Thread`), never on the
/// Swift concurrency pool, and names them so they show up in `top -H`, `gdb` and `/proc`.
enum WorkerThread {
    /// Starts `body` on a new thread called `name` (at most 15 bytes are kept by the kernel).
    static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            nameCurrentThread(name)
            body()
        }
        thread.name = name
        thread.start()
    }

    /// Sets the kernel's name (`comm`) of the calling thread. Foundation's `Thread.name` does not do
    /// this on Linux, and `pthread_setname_np` is not in Swift's Glibc module, so this writes
    /// `/proc/thread-self/comm` (allowed for the calling thread); failure is harmless and ignored.
    static func nameCurrentThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}
