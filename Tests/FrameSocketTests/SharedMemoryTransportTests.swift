@testable import FrameSocket
import FrameWire
import Glibc
import XCTest

/// `BGRX-SHM` over a real Unix socket (Protocol/frame-wire.md §2.8): the memfd travels once per connection
/// and generation with `SCM_RIGHTS`, the reader maps it and attaches it to each frame; a new size is a new
/// generation with a new descriptor; a reconnect passes it again; a frame whose memory is missing, too small
/// or described otherwise ends the connection with a typed error, frames before it standing.
final class SharedMemoryTransportTests: SocketTestCase {
    /// A small JPEG-format message (the body is not checked by the framing).
    private func validJPEGMessage() -> [UInt8] {
        FrameEncoder.encode(header: FrameHeader(contentLength: 3, bufferWidth: 4, bufferHeight: 4), body: [0xFF, 0xD8, 0xFF])
    }

    private func shmMessage(_ picture: SharedPicture, slot: Int, version: UInt64, width: Int? = nil, height: Int? = nil, sequence: UInt64) -> [UInt8] {
        let header = FrameHeader(contentLength: 1, bufferWidth: width ?? picture.width, bufferHeight: height ?? picture.height,
                                 sequence: sequence, format: .sharedBGRX,
                                 memory: .init(generation: picture.generation, slot: slot, version: version))
        return FrameEncoder.encode(header: header, body: [0x0A])
    }

    /// Writes `slot` of `picture` with bytes from `seed` between the seqlock's two writes; returns the version.
    private func paint(_ picture: SharedPicture, slot: Int, seed: UInt8) -> UInt64 {
        let odd = picture.beginWrite(slot: slot)
        XCTAssertEqual(odd % 2, 1)
        let pixels = picture.mutablePixels(slot: slot)
        for index in 0..<pixels.count { pixels[index] = UInt8(truncatingIfNeeded: index &* 7 &+ Int(seed)) }
        return picture.endWrite(slot: slot, began: odd)
    }

    private func start() throws -> (FrameServer, FrameSender, EventRecorder) {
        let path = try socketPath()
        let events = EventRecorder()
        let server = FrameServer(path: path, logger: logger("server"), onEvent: events.handler)
        try server.start()
        let sender = try FrameSender(path: path, logger: logger("sender"))
        XCTAssertTrue(events.wait(timeout: 5) { $0.connected.count == 1 })
        XCTAssertTrue(waitUntil(timeout: 5) { sender.stats.isConnected })
        return (server, sender, events)
    }

    private func offer(_ sender: FrameSender, _ message: [UInt8], _ picture: SharedPicture) {
        XCTAssertTrue(sender.flush(timeout: .seconds(5)))
        sender.offer(message, sharedPicture: picture)
        XCTAssertTrue(sender.flush(timeout: .seconds(5)))
    }

    func testPicturesTravelInSharedMemory() throws {
        let (server, sender, events) = try start()
        defer { server.stop() }
        let first = try SharedPicture.create(width: 8, height: 4, generation: 1)
        XCTAssertEqual(first.slotBytes, 4096)
        XCTAssertEqual(first.byteCount, 3 * 4096)
        let v0 = paint(first, slot: 0, seed: 1), v1 = paint(first, slot: 1, seed: 2)
        XCTAssertEqual([v0, v1], [2, 2])
        offer(sender, shmMessage(first, slot: 0, version: v0, sequence: 0), first)
        offer(sender, shmMessage(first, slot: 1, version: v1, sequence: 1), first)
        XCTAssertTrue(events.wait(timeout: 5) { $0.frames.count == 2 })
        let frames = events.frames.map(\.0)
        let mapped = try XCTUnwrap(frames[0].sharedPicture)
        XCTAssertTrue(frames[1].sharedPicture === mapped, "one mapping per generation")
        XCTAssertFalse(mapped === first)
        XCTAssertNotEqual(mapped.descriptor, first.descriptor, "the reader's own descriptor")
        XCTAssertEqual([mapped.generation, UInt64(mapped.width), UInt64(mapped.height)], [1, 8, 4])
        XCTAssertEqual(Array(mapped.pixels(slot: 0)), Array(first.pixels(slot: 0)), "the writer's bytes, exactly")
        XCTAssertEqual(Array(mapped.pixels(slot: 1)), Array(first.pixels(slot: 1)))
        XCTAssertEqual(mapped.version(slot: 0), 2)
        XCTAssertTrue(mapped.isIntact(slot: 0, version: 2))
        // The writer rewrites slot 0: the reader sees it mid-write (odd) and after (a new even version).
        let odd = first.beginWrite(slot: 0)
        XCTAssertFalse(mapped.isIntact(slot: 0, version: 2), "being rewritten")
        XCTAssertEqual(mapped.version(slot: 0), odd)
        XCTAssertEqual(first.endWrite(slot: 0, began: odd), 4)
        XCTAssertFalse(mapped.isIntact(slot: 0, version: 2), "rewritten")

        // A resize: a new memfd, the next generation, passed with its message.
        let second = try SharedPicture.create(width: 20, height: 10, generation: 2)
        offer(sender, shmMessage(second, slot: 0, version: paint(second, slot: 0, seed: 3), sequence: 2), second)
        XCTAssertTrue(events.wait(timeout: 5) { $0.frames.count == 3 })
        let resized = try XCTUnwrap(events.frames[2].0.sharedPicture)
        XCTAssertEqual([resized.generation, UInt64(resized.width), UInt64(resized.height)], [2, 20, 10])
        XCTAssertEqual(Array(resized.pixels(slot: 0)), Array(second.pixels(slot: 0)))
        XCTAssertEqual(sender.stats.sentFrames, 3)
        XCTAssertEqual(sender.stats.droppedFrames, 0)
        XCTAssertTrue(events.ended.isEmpty)
    }

    /// After the reader goes and comes back, the next message passes the descriptor again.
    func testReconnectPassesTheDescriptorAgain() throws {
        let (server, sender, events) = try start()
        let picture = try SharedPicture.create(width: 4, height: 2, generation: 5)
        offer(sender, shmMessage(picture, slot: 0, version: paint(picture, slot: 0, seed: 9), sequence: 0), picture)
        XCTAssertTrue(events.wait(timeout: 5) { $0.frames.count == 1 })
        server.stop()
        XCTAssertTrue(waitUntil(timeout: 5) { !sender.stats.isConnected })
        let again = FrameServer(path: sender.path, logger: logger("server"), onEvent: events.handler)
        try again.start()
        defer { again.stop() }
        XCTAssertTrue(waitUntil(timeout: 10) { sender.stats.isConnected })
        offer(sender, shmMessage(picture, slot: 1, version: paint(picture, slot: 1, seed: 4), sequence: 1), picture)
        XCTAssertTrue(events.wait(timeout: 5) { $0.frames.count == 2 })
        let remapped = try XCTUnwrap(events.frames[1].0.sharedPicture)
        XCTAssertEqual(Array(remapped.pixels(slot: 1)), Array(picture.pixels(slot: 1)))
        XCTAssertEqual(events.ended.map(\.1), [.serverStopped])
    }

    func testMissingTooSmallAndMisdescribedMemoryEndTheConnection() throws {
        // No descriptor at all: a plain write of the message.
        do {
            let path = try socketPath("plain.sock")
            let events = EventRecorder()
            let server = FrameServer(path: path, logger: logger("server"), onEvent: events.handler)
            try server.start()
            defer { server.stop() }
            let fd = rawConnect(path)
            defer { close(fd) }
            let picture = try SharedPicture.create(width: 4, height: 2, generation: 7)
            let bytes = shmMessage(picture, slot: 0, version: 0, sequence: 0)
            XCTAssertEqual(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }, bytes.count)
            XCTAssertTrue(events.wait(timeout: 5) { $0.ended.count == 1 })
            XCTAssertEqual(events.ended.first?.1, .stream(.error(.sharedMemory(.descriptorMissing(generation: 7)))))
            XCTAssertTrue(events.frames.isEmpty)
        }
        // The memory passed is smaller than the header's size says, or describes another size.
        for (width, height, expected) in [
            (64, 64, SharedPictureError.tooSmall(bytes: 3 * 4096, needed: 4096 + 2 * 16384)),
            (4, 8, .badControlBlock("width, height, stride, slots [8, 4, 32, 2], expected [4, 8, 16, 2]")),
            (16384, 8193, .tooLarge(width: 16384, height: 8193, limit: SharedPicture.maximumSlotBytes)),
        ] {
            let (server, sender, events) = try start()
            defer { server.stop() }
            let good = try SharedPicture.create(width: 8, height: 4, generation: 1)
            offer(sender, shmMessage(good, slot: 0, version: paint(good, slot: 0, seed: 1), sequence: 0), good)
            let liar = try SharedPicture.create(width: 8, height: 4, generation: 2)
            offer(sender, shmMessage(liar, slot: 0, version: 0, width: width, height: height, sequence: 1), liar)
            XCTAssertTrue(events.wait(timeout: 5) { $0.ended.count == 1 }, "\(width)x\(height)")
            XCTAssertEqual(events.ended.first?.1, .stream(.error(.sharedMemory(expected))), "\(width)x\(height)")
            XCTAssertEqual(events.frames.count, 1, "the frame before stands")
            sender.close()
        }
    }

    /// A regular file passed as the memory (not a sealed memfd: its writer could shrink it) is refused, and
    /// descriptors passed with JPEG frames, which no frame takes, end the connection past the limit instead of
    /// piling up; every received descriptor is closed (the base class checks none outlives the test).
    func testUnsealedMemoryAndUnaskedDescriptorsAreRefused() throws {
        let path = try socketPath()
        let events = EventRecorder()
        let server = FrameServer(path: path, logger: logger("server"), onEvent: events.handler)
        try server.start()
        defer { server.stop() }
        let file = folder + "/plain-file"
        let fileFD = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        XCTAssertGreaterThanOrEqual(fileFD, 0)
        defer { close(fileFD); unlink(file) }
        XCTAssertEqual(ftruncate(fileFD, 3 * 4096), 0)

        func send(_ bytes: [UInt8], passing descriptor: Int32, on fd: Int32) {
            let sent = bytes.withUnsafeBytes { UnixSocket.send(fd, $0, passing: descriptor) }
            XCTAssertEqual(sent, bytes.count)
        }
        let unsealed = rawConnect(path)
        let header = FrameHeader(contentLength: 1, bufferWidth: 8, bufferHeight: 4, format: .sharedBGRX,
                                 memory: .init(generation: 1, slot: 0, version: 2))
        send(FrameEncoder.encode(header: header, body: [0x0A]), passing: fileFD, on: unsealed)
        XCTAssertTrue(events.wait(timeout: 5) { $0.ended.count == 1 })
        XCTAssertEqual(events.ended.last?.1, .stream(.error(.sharedMemory(.notSealed))))
        close(unsealed)

        let flooding = rawConnect(path)
        XCTAssertTrue(events.wait(timeout: 5) { $0.connected.count == 2 })
        // Five (one past the limit): the reader may end the connection as soon as it has read the fifth, so a
        // sixth could meet EPIPE (seen in a rehearsal under load).
        for _ in 0..<5 { send(validJPEGMessage(), passing: fileFD, on: flooding) }
        XCTAssertTrue(events.wait(timeout: 5) { $0.ended.count == 2 })
        XCTAssertEqual(events.ended.last?.1, .stream(.error(.sharedMemory(.tooManyDescriptors(limit: 4)))))
        XCTAssertLessThanOrEqual(events.frames.count, 5, "frames before the limit stand")
        close(flooding)
    }

    func testLimitsOfTheWriter() {
        XCTAssertEqual(SharedPicture.slotBytes(width: 1920, height: 1080), 8_294_400)
        XCTAssertEqual(SharedPicture.slotBytes(width: 1, height: 1), 4096)
        XCTAssertEqual(SharedPicture.slotBytes(width: 8192, height: 8192), 256 << 20, "the named limit, exactly")
        XCTAssertNil(SharedPicture.slotBytes(width: 8192, height: 8193))
        XCTAssertNil(SharedPicture.slotBytes(width: 0, height: 10))
        XCTAssertThrowsError(try SharedPicture.create(width: 16384, height: 16384, generation: 1)) { error in
            XCTAssertEqual(error as? SharedPictureError, .tooLarge(width: 16384, height: 16384, limit: 256 << 20))
        }
    }
}
