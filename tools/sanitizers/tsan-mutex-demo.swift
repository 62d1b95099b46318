// Why ThreadSanitizer's reports on Mutex-guarded state are noise with this toolchain (Swift 6.3.1, Linux):
// a correct program, every access inside `withLock`, is reported as a "Swift access race" once threads
// contend, because the lock's futex handoff inside libswiftSynchronization is not visible to TSan.
//
//   swiftc -sanitize=thread -g tools/sanitizers/tsan-mutex-demo.swift -o /tmp/tsan-mutex-demo && /tmp/tsan-mutex-demo
//
// prints "WARNING: ThreadSanitizer: Swift access race" (and 800000).
import Foundation
import Synchronization

final class Box: Sendable { let values = Mutex<[Int]>([]) }
let box = Box()
let group = DispatchGroup()
for thread in 0..<4 {
    group.enter()
    Thread.detachNewThread {
        for i in 0..<200_000 { box.values.withLock { $0.append(i + thread) } }
        group.leave()
    }
}
group.wait()
print(box.values.withLock { $0.count })
