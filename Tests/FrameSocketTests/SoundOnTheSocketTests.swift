import Foundation
import FrameSocket
import FrameWire
import ScreencastSupport
import XCTest

/// Sound messages (Protocol/frame-wire.md §2.10) on the call's socket: the server delivers them in order
/// between the pictures, the pictures undisturbed, and skips kinds it does not know; the sender never
/// replaces sound (pictures are latest-wins) and writes it ahead of a waiting picture.
final class SoundOnTheSocketTests: SocketTestCase {
    private func sound(_ index: Int) -> [UInt8] {
        FrameEncoder.encodeSound(
            header: SoundHeader(samples: 480, timestampMicros: 1_000_000 + UInt64(index) * 10_000, sequence: UInt64(index)),
            body: [UInt8](repeating: UInt8(index), count: 1920))
    }

    private func picture(_ index: Int) -> [UInt8] {
        FrameEncoder.encode(header: FrameHeader(contentLength: 4, bufferWidth: 2, bufferHeight: 2, sequence: UInt64(index)),
                            body: [0xFF, 0xD8, 0xFF, 0xD9])
    }

    func testTheCallsReaderTakesSoundBetweenPicturesAndSkipsUnknownKinds() throws {
        let events = EventRecorder()
        let path = try socketPath()
        let server = FrameServer(path: path, limits: .standard, logger: logger("server"), onEvent: events.handler)
        try server.start()
        defer { server.stop() }
        let sender = try FrameSender(path: path, logger: logger("sender"))
        let unknown = Array("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nMessage-Kind: cursor\r\n\r\nabc".utf8)
        // Lossless sends, so the order on the socket is this order.
        for index in 0..<20 {
            try sender.send(picture(index))
            try sender.send(sound(2 * index))
            if index == 7 { try sender.send(unknown) }
            try sender.send(sound(2 * index + 1))
        }
        XCTAssertTrue(sender.flush(timeout: .seconds(5)))
        sender.close()
        XCTAssertTrue(events.wait(timeout: 5) { !$0.ended.isEmpty })
        XCTAssertEqual(events.ended.first?.1, .stream(.eof))
        XCTAssertEqual(events.frames.map(\.0.header.sequence), (0..<20).map { UInt64($0) }, "every picture, in order")
        let sounds = events.events.compactMap { if case .sound(let sound, _) = $0 { sound } else { nil } }
        XCTAssertEqual(sounds.map(\.header.sequence), (0..<40).map { UInt64($0) })
        XCTAssertTrue(sounds.allSatisfy { $0.body == [UInt8](repeating: UInt8($0.header.sequence!), count: 1920) })
        let kinds = events.events.compactMap { event -> String? in
            switch event {
            case .frame: "p"
            case .sound: "s"
            default: nil
            }
        }
        XCTAssertEqual(kinds.joined(), String(repeating: "pss", count: 20))
    }

    func testSoundIsNeverReplacedAndGoesAheadOfTheWaitingPicture() throws {
        let events = EventRecorder()
        let path = try socketPath()
        let sender = try FrameSender(path: path, logger: logger("sender"))
        defer { sender.close() }
        // No reader yet: pictures replace each other, sound waits (up to 1 s of it).
        for index in 0..<5 {
            sender.offer(picture(index))
            sender.offerSound(sound(index), durationMicros: 10_000)
        }
        XCTAssertEqual(sender.stats.queuedSoundMessages, 5)
        XCTAssertEqual(sender.stats.droppedSoundMessages, 0)
        let server = FrameServer(path: path, limits: .standard, logger: logger("server"), onEvent: events.handler)
        try server.start()
        defer { server.stop() }
        XCTAssertTrue(events.wait(timeout: 10) { $0.frames.count == 1 && $0.events.count >= 7 })
        let sounds = events.events.compactMap { if case .sound(let sound, _) = $0 { sound.header.sequence } else { nil } }
        XCTAssertEqual(sounds, [0, 1, 2, 3, 4], "all the sound, in order")
        XCTAssertEqual(events.frames.map(\.0.header.sequence), [4], "the newest picture only")
        XCTAssertEqual(sender.stats.sentSoundMessages, 5)
    }

    func testMoreThanASecondOfWaitingSoundDropsTheOldestCountedAndLogged() throws {
        let log = LogRecorder()
        let path = try socketPath()
        let sender = try FrameSender(path: path, logger: Logger(component: "sender", threshold: .info, output: log.output))
        defer { sender.close() }
        for index in 0..<150 { sender.offerSound(sound(index), durationMicros: 10_000) }
        XCTAssertEqual(sender.stats.queuedSoundMessages, 100, "1 s of 10 ms messages")
        XCTAssertEqual(sender.stats.droppedSoundMessages, 50)
        XCTAssertEqual(log.count(containing: "sound dropped"), 1, log.lines.joined(separator: "\n"))
    }
}
