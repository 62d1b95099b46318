import Foundation
import Media
import Synchronization
import XTestSupport

/// A screen of text that keeps changing, painted on an X server's root window from a thread of its own: a
/// light page of dark, letter-like cells (8×16 px, each 2–3 strokes in a 6×10 box, in words of 2–9) in which
/// `linesPerFrame` random lines get new text `framesPerSecond` times a second — what a busy terminal or log
/// view costs an encoder, at a rate the test sets (a program such as `top` in an xterm repaints when it likes).
final class ChangingTextScreen: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    /// Pictures painted so far.
    let painted = Atomic<Int>(0)

    /// Starts painting `display` (width × height) at once.
    init(display: String, width: Int, height: Int, framesPerSecond: Double = 10, linesPerFrame: Int = 1) {
        let thread = Thread { [self] in
            // The connection lives on this thread only.
            guard let client = try? XTestClient(display: display) else {
                done.signal()
                return
            }
            var generator = SystemRandomNumberGenerator()
            // Letter-like glyphs: 2–3 of 8 one-pixel strokes in a 6×10 box (random bits would be noise, far
            // dearer to encode than text).
            let strokes: [(Int, Int) -> Bool] = [
                { x, _ in x == 0 }, { x, _ in x == 5 }, { x, _ in x == 2 }, { _, y in y == 0 }, { _, y in y == 5 }, { _, y in y == 9 },
                { x, y in x == y * 6 / 10 }, { x, y in x == 5 - y * 6 / 10 },
            ]
            let glyphs: [[Bool]] = (0..<64).map { _ in
                let chosen = (0..<Int.random(in: 2...3, using: &generator)).map { _ in strokes[Int.random(in: 0..<strokes.count, using: &generator)] }
                return (0..<60).map { index in chosen.contains { $0(index % 6, index / 6) } }
            }
            let (cellWidth, cellHeight) = (8, 16)
            let (columns, rows) = (width / cellWidth, height / cellHeight)
            var image = BGRXImage(width: width, height: height)
            let stride = image.stride
            var pixels = [UInt8](repeating: 0xE8, count: stride * height)
            func writeLine(_ row: Int) {
                var column = 0
                while column < columns {
                    let word = Int.random(in: 2...9, using: &generator)
                    for _ in 0..<word where column < columns {
                        let glyph = glyphs[Int.random(in: 0..<glyphs.count, using: &generator)]
                        for y in 0..<cellHeight {
                            let base = (row * cellHeight + y) * stride + column * cellWidth * 4
                            for x in 0..<cellWidth {
                                let on = x >= 1 && x < 7 && y >= 3 && y < 13 && glyph[(y - 3) * 6 + (x - 1)]
                                let value: UInt8 = on ? 0x30 : 0xE8
                                pixels[base + x * 4] = value
                                pixels[base + x * 4 + 1] = value
                                pixels[base + x * 4 + 2] = value
                            }
                        }
                        column += 1
                    }
                    column += 1  // a space
                }
            }
            for row in 0..<rows { writeLine(row) }
            let interval = 1 / framesPerSecond
            var next = Date()
            while !stopped.load(ordering: .acquiring) {
                for _ in 0..<linesPerFrame { writeLine(Int.random(in: 0..<rows, using: &generator)) }
                if let filled = try? BGRXImage(width: width, height: height, stride: stride, bytes: pixels) { image = filled }
                client.setRootBackground(image)
                painted.add(1, ordering: .relaxed)
                next += interval
                let wait = next.timeIntervalSinceNow
                if wait > 0 { Thread.sleep(forTimeInterval: wait) } else { next = Date() }
            }
            done.signal()
        }
        thread.start()
    }

    /// Stops painting and waits for the thread to end.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        done.wait()
    }
}
