import Media
import XCTest

final class I420BufferTests: XCTestCase {
    func testPlaneLayoutForOddSizes() throws {
        let frame = I420Buffer(width: 5, height: 3, colorSpace: .bt601Limited)
        XCTAssertEqual(frame.chromaWidth, 3)
        XCTAssertEqual(frame.chromaHeight, 2)
        XCTAssertEqual([frame.yStride, frame.uvStride], [5, 3])
        XCTAssertEqual([frame.yOffset, frame.uOffset, frame.vOffset], [0, 15, 21])
        XCTAssertEqual(frame.bytes.count, 27)
        XCTAssertEqual(I420Buffer.byteCount(width: 5, height: 3), 27)
        XCTAssertEqual([frame.y.count, frame.u.count, frame.v.count], [15, 6, 6])
        XCTAssertTrue(frame.y.allSatisfy { $0 == 16 } && frame.u.allSatisfy { $0 == 128 } && frame.v.allSatisfy { $0 == 128 }, "limited-range black")
        XCTAssertEqual(frame.colorSpace, .bt601Limited)
        frame.withUnsafePlanes { y, u, v in
            XCTAssertEqual([y.count, u.count, v.count], [15, 6, 6])
        }
        let full = I420Buffer(width: 5, height: 3, colorSpace: .bt601Full)
        XCTAssertTrue(full.y.allSatisfy { $0 == 0 } && full.u.allSatisfy { $0 == 128 }, "full-range black")
        XCTAssertEqual(full.colorSpace, .bt601Full)
        XCTAssertNotEqual(full, frame)
    }

    /// The colour space is part of a picture's value: same bytes, other range, not equal; resizing keeps it.
    func testColorSpaceIsPartOfThePicture() throws {
        let bytes: [UInt8] = [16, 16, 16, 16, 128, 128]
        var limited = try I420Buffer(width: 2, height: 2, bytes: bytes, colorSpace: .bt601Limited)
        let full = try I420Buffer(width: 2, height: 2, bytes: bytes, colorSpace: .bt601Full)
        XCTAssertNotEqual(limited, full)
        limited.resize(width: 4, height: 4)
        XCTAssertEqual(limited.colorSpace, .bt601Limited)
        XCTAssertEqual("\(YCbCrColorSpace.bt601Limited)", "BT.601 limited range")
        XCTAssertEqual("\(YCbCrColorSpace.bt601Full)", "BT.601 full range")
        var copy = I420Buffer()
        full.copy(into: &copy)
        XCTAssertEqual(copy, full)
    }

    func testWrappingBytesChecksTheCount() throws {
        let frame = try I420Buffer(width: 2, height: 2, bytes: [1, 2, 3, 4, 5, 6], colorSpace: .bt601Full)
        XCTAssertEqual(frame.colorSpace, .bt601Full)
        XCTAssertEqual(Array(frame.y), [1, 2, 3, 4])
        XCTAssertEqual(Array(frame.u), [5])
        XCTAssertEqual(Array(frame.v), [6])
        XCTAssertThrowsError(try I420Buffer(width: 2, height: 2, bytes: [1, 2, 3], colorSpace: .bt601Limited))
        XCTAssertThrowsError(try I420Buffer(width: -1, height: 2, bytes: [], colorSpace: .bt601Limited))
    }

    func testResizeKeepsTheAllocationWhenTheByteCountIsUnchanged() {
        var frame = I420Buffer(width: 64, height: 32, colorSpace: .bt601Limited)
        let address = frame.bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        frame.resize(width: 32, height: 64)
        XCTAssertEqual([frame.width, frame.height], [32, 64])
        XCTAssertEqual(frame.bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }, address)
        frame.resize(width: 16, height: 16)
        XCTAssertEqual(frame.bytes.count, I420Buffer.byteCount(width: 16, height: 16))
    }

    func testMutablePlanesWriteIntoTheRightPlace() {
        var frame = I420Buffer(width: 2, height: 2, colorSpace: .bt601Limited)
        frame.withUnsafeMutablePlanes { y, u, v in
            y[3] = 9
            u[0] = 7
            v[0] = 8
        }
        XCTAssertEqual(frame.bytes, [16, 16, 16, 9, 7, 8])
    }
}
