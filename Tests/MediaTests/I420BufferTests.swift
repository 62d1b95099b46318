import Media
import XCTest

final class I420BufferTests: XCTestCase {
    func testPlaneLayoutForOddSizes() throws {
        let frame = I420Buffer(width: 5, height: 3)
        XCTAssertEqual(frame.chromaWidth, 3)
        XCTAssertEqual(frame.chromaHeight, 2)
        XCTAssertEqual([frame.yStride, frame.uvStride], [5, 3])
        XCTAssertEqual([frame.yOffset, frame.uOffset, frame.vOffset], [0, 15, 21])
        XCTAssertEqual(frame.bytes.count, 27)
        XCTAssertEqual(I420Buffer.byteCount(width: 5, height: 3), 27)
        XCTAssertEqual([frame.y.count, frame.u.count, frame.v.count], [15, 6, 6])
        XCTAssertTrue(frame.y.allSatisfy { $0 == 0 } && frame.u.allSatisfy { $0 == 128 } && frame.v.allSatisfy { $0 == 128 })
        frame.withUnsafePlanes { y, u, v in
            XCTAssertEqual([y.count, u.count, v.count], [15, 6, 6])
        }
    }

    func testWrappingBytesChecksTheCount() throws {
        let frame = try I420Buffer(width: 2, height: 2, bytes: [1, 2, 3, 4, 5, 6])
        XCTAssertEqual(Array(frame.y), [1, 2, 3, 4])
        XCTAssertEqual(Array(frame.u), [5])
        XCTAssertEqual(Array(frame.v), [6])
        XCTAssertThrowsError(try I420Buffer(width: 2, height: 2, bytes: [1, 2, 3]))
        XCTAssertThrowsError(try I420Buffer(width: -1, height: 2, bytes: []))
    }

    func testResizeKeepsTheAllocationWhenTheByteCountIsUnchanged() {
        var frame = I420Buffer(width: 64, height: 32)
        let address = frame.bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        frame.resize(width: 32, height: 64)
        XCTAssertEqual([frame.width, frame.height], [32, 64])
        XCTAssertEqual(frame.bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }, address)
        frame.resize(width: 16, height: 16)
        XCTAssertEqual(frame.bytes.count, I420Buffer.byteCount(width: 16, height: 16))
    }

    func testMutablePlanesWriteIntoTheRightPlace() {
        var frame = I420Buffer(width: 2, height: 2)
        frame.withUnsafeMutablePlanes { y, u, v in
            y[3] = 9
            u[0] = 7
            v[0] = 8
        }
        XCTAssertEqual(frame.bytes, [0, 0, 0, 9, 7, 8])
    }
}
