internal import CTurboJPEG

/// The one owner of a libturbojpeg compressor handle (`tjInitCompress`/`tjDestroy`) and its reused
/// worst-case output buffer (`tjAlloc`, grown to `tjBufSize`, never shrunk), shared by ``JPEGEncoder``
/// (I420 input) and ``BGRXJPEGEncoder`` (screen captures). Every call compresses with `TJFLAG_NOREALLOC`
/// into that buffer and copies the JPEG into the caller's array (its capacity kept), so same-sized frames
/// allocate nothing here.
///
/// One thread at a time (not `Sendable`).
final class TurboJPEGCompressor {
    private let handle: tjhandle
    /// libturbojpeg-allocated output buffer, `outputCapacity` bytes; nil until first use.
    private var output: UnsafeMutablePointer<UInt8>?
    private var outputCapacity = 0
    private let planePointers: UnsafeMutablePointer<UnsafePointer<UInt8>?>
    private let planeStrides: UnsafeMutablePointer<Int32>

    /// - Throws: `MediaError.handleCreationFailed` if libturbojpeg cannot allocate its handle.
    init() throws(MediaError) {
        guard let handle = tjInitCompress() else {
            throw .handleCreationFailed(turboJPEGError(nil).message)
        }
        self.handle = handle
        // Allocated only once nothing can throw any more, so a failed init leaks nothing.
        planePointers = .allocate(capacity: 3)
        planeStrides = .allocate(capacity: 3)
    }

    deinit {
        tjFree(output)
        tjDestroy(handle)
        planePointers.deallocate()
        planeStrides.deallocate()
    }

    /// Compresses Y, Cb, Cr planes (`tjCompressFromYUVPlanes`; `u`/`v` nil for gray) of a `width`×`height`
    /// picture at `samp` (a `TJSAMP_*`) into `jpeg`. The luma plane must be padded to whole chroma samples
    /// (`tjPlaneWidth` × `tjPlaneHeight`), as libturbojpeg reads it.
    /// - Throws: `MediaError.jpegEncode` if the output cannot be reserved or libturbojpeg fails.
    func compressPlanes(
        y: UnsafePointer<UInt8>, yStride: Int, u: UnsafePointer<UInt8>?, v: UnsafePointer<UInt8>?, uvStride: Int,
        width: Int, height: Int, samp: Int32, quality: Int, into jpeg: inout [UInt8]
    ) throws(MediaError) {
        try reserveJPEGOutput(&output, capacity: &outputCapacity, width: width, height: height, subsampling: samp)
        planePointers[0] = y
        planePointers[1] = u
        planePointers[2] = v
        planeStrides[0] = Int32(yStride)
        planeStrides[1] = Int32(uvStride)
        planeStrides[2] = Int32(uvStride)
        var size = UInt(outputCapacity)
        let status = tjCompressFromYUVPlanes(
            handle, planePointers, Int32(width), planeStrides, Int32(height), samp,
            &output, &size, Int32(quality), Int32(TJFLAG_NOREALLOC))
        try finish(status: status, size: size, into: &jpeg)
    }

    /// Converts and compresses BGRX pixels (`tjCompress2`, `TJPF_BGRX`) at `samp` into `jpeg`.
    /// - Throws: `MediaError.jpegEncode` if the output cannot be reserved or libturbojpeg fails.
    func compressBGRX(_ pixels: BGRXPixels, samp: Int32, quality: Int, into jpeg: inout [UInt8]) throws(MediaError) {
        try reserveJPEGOutput(&output, capacity: &outputCapacity, width: pixels.width, height: pixels.height, subsampling: samp)
        var size = UInt(outputCapacity)
        let status = tjCompress2(
            handle, pixels.base.baseAddress!.assumingMemoryBound(to: UInt8.self),
            Int32(pixels.width), Int32(pixels.stride), Int32(pixels.height), Int32(TJPF_BGRX.rawValue),
            &output, &size, samp, Int32(quality), Int32(TJFLAG_NOREALLOC))
        try finish(status: status, size: size, into: &jpeg)
    }

    private func finish(status: Int32, size: UInt, into jpeg: inout [UInt8]) throws(MediaError) {
        guard status == 0, let output else {
            throw .jpegEncode(turboJPEGError(handle).message)
        }
        jpeg.removeAll(keepingCapacity: true)
        jpeg.append(contentsOf: UnsafeBufferPointer(start: output, count: Int(size)))
    }
}
