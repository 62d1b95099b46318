import Foundation
import Glibc
import PipeWireCursor
import Synchronization

/// The newest picture from PipeWire, copied out of its buffer on the `pw-data-loop` thread (only the changed
/// rectangles when the producer says which), the changes since the capture thread last took it, and the wake-up
/// pipe of the capture thread. `Sendable` through its `Mutex`; the pipe's ends are immutable descriptors.
final class PortalStaging: Sendable {
    struct Picture {
        var bytes: [UInt8] = []
        var width = 0
        var height = 0
        /// When PipeWire delivered the newest picture, µs.
        var receivedMicros: UInt64 = 0
        /// Rectangles changed since the last ``take(into:)``; nil: the whole picture.
        var changed: [CaptureRect]? = nil
        var fresh = false
        var pictures = 0
        var end: ScreenCapture.Outcome?
        /// The PipeWire daemon went away (why): the share can be asked for again.
        var lost: String?
        /// The pointer from the cursor metadata (cursor mode METADATA); nil in the other modes.
        var pointer: PointerState?
    }

    private let state = Mutex(Picture())
    private let readEnd: Int32
    private let writeEnd: Int32

    init() throws(CaptureError) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw .systemCall(name: "pipe", errno: errno) }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    deinit {
        Glibc.close(readEnd)
        Glibc.close(writeEnd)
    }

    var pollDescriptor: Int32 { readEnd }

    var hasPicture: Bool { state.withLock { $0.pictures > 0 } }

    /// A new picture (the pw-data-loop thread): the changed rows copied, the change recorded, the loop woken.
    func put(_ picture: PipeWirePicture) {
        let source = picture.pixels
        state.withLock { staged in
            let row = source.width * 4
            var rects = picture.damage
            if staged.width != source.width || staged.height != source.height {
                staged.bytes = [UInt8](repeating: 0, count: row * source.height)
                staged.width = source.width
                staged.height = source.height
                rects = nil
            }
            let copy = rects ?? [CaptureRect(x: 0, y: 0, width: source.width, height: source.height)]
            staged.bytes.withUnsafeMutableBytes { target in
                for r in copy {
                    for y in r.y..<(r.y + r.height) {
                        (target.baseAddress! + y * row + r.x * 4)
                            .copyMemory(from: source.base.baseAddress! + y * source.stride + r.x * 4, byteCount: r.width * 4)
                    }
                }
            }
            if let rects, staged.changed != nil {
                staged.changed! += rects
            } else {
                staged.changed = nil
            }
            staged.receivedMicros = picture.receivedMicros
            staged.fresh = true
            staged.pictures += 1
        }
        wake()
    }

    /// The pointer moved or changed (the pw-data-loop thread, cursor mode METADATA): kept, and the loop woken once
    /// there is a picture to draw it on.
    func putPointer(_ pointer: PointerState) {
        let wakes = state.withLock { staged in
            staged.pointer = pointer
            if staged.pictures > 0 { staged.fresh = true }
            return staged.pictures > 0
        }
        if wakes { wake() }
    }

    /// The capture ends (the portal or the stream said so).
    func end(_ outcome: ScreenCapture.Outcome) {
        state.withLock { if $0.end == nil { $0.end = outcome } }
        wake()
    }

    /// The PipeWire daemon went away (the pw-data-loop thread): the capture thread asks the portal again.
    func lose(_ reason: String) {
        state.withLock { if $0.end == nil, $0.lost == nil { $0.lost = reason } }
        wake()
    }

    /// A new share replaces the lost one: the loss is forgotten and the next picture counts as whole.
    func reset() {
        state.withLock {
            $0.lost = nil
            $0.changed = nil
        }
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = Glibc.write(writeEnd, &byte, 1)
    }

    /// Empties the wake-up pipe; returns whether a new picture came, the end, if any, and why the PipeWire
    /// daemon was lost, if it was.
    func poll() -> (fresh: Bool, end: ScreenCapture.Outcome?, lost: String?) {
        var sink = [UInt8](repeating: 0, count: 64)
        while Glibc.read(readEnd, &sink, sink.count) > 0 {}
        return state.withLock { staged in
            defer { staged.fresh = false }
            return (staged.fresh, staged.end, staged.lost)
        }
    }

    /// Copies what changed since the last take into `work` (made the picture's size first: then all of it), and
    /// `restoring` (where the pointer was drawn into `work`, clipped to the picture) back from the clean picture;
    /// returns those rectangles (nil: the whole picture), the picture's size, its delivery time and the pointer.
    func take(into work: inout [UInt8], restoring: CaptureRect? = nil)
        -> (changed: [CaptureRect]?, width: Int, height: Int, receivedMicros: UInt64, pointer: PointerState?)
    {
        state.withLock { staged in
            var changed = staged.changed
            if let restoring, changed != nil {
                let clipped = restoring.intersection(CaptureRect(x: 0, y: 0, width: staged.width, height: staged.height))
                if !clipped.isEmpty { changed!.append(clipped) }
            }
            if work.count != staged.bytes.count {
                work = staged.bytes
                changed = nil
            } else if let rects = changed {
                let row = staged.width * 4
                staged.bytes.withUnsafeBytes { source in
                    work.withUnsafeMutableBytes { target in
                        for r in rects {
                            for y in r.y..<(r.y + r.height) {
                                (target.baseAddress! + y * row + r.x * 4)
                                    .copyMemory(from: source.baseAddress! + y * row + r.x * 4, byteCount: r.width * 4)
                            }
                        }
                    }
                }
            } else {
                work.withUnsafeMutableBytes { target in
                    staged.bytes.withUnsafeBytes { target.copyMemory(from: $0) }
                }
            }
            staged.changed = []
            return (changed, staged.width, staged.height, staged.receivedMicros, staged.pointer)
        }
    }
}

