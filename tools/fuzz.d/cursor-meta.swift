// Fuzz target: a PipeWire buffer's cursor meta (PointerState.apply, Sources/PipeWireCursor/PointerState.swift):
// the SPA_META_Cursor region a producer writes in the portal's cursor mode METADATA (spa/buffer/meta.h:
// spa_meta_cursor, then a spa_meta_bitmap at its bitmap_offset, then the pixels at the bitmap's offset).
//
// Input: two bytes choosing where to split, then the bytes of two regions applied one after the other (a shape,
// then a move that keeps it). Each region is copied to a buffer of exactly its size, so a read past it is an
// AddressSanitizer report.
// Properties: never traps or reads outside the region; a refusal leaves the pointer as it was; a taken picture is
// at most PointerState.maxSide a side with width × height words; bounds exist only for a shown, non-empty picture
// and are position − hotspot.
import Glibc
import PipeWireCursor

func fuzzOne(_ bytes: [UInt8]) {
    var input = FuzzInput(bytes)
    let split = Int(input.byte()) << 8 | Int(input.byte())
    let rest = Array(bytes[min(2, bytes.count)...])
    let cut = min(split, rest.count)
    var state = PointerState()
    for part in [rest[..<cut], rest[cut...]] {
        let region = UnsafeMutableRawBufferPointer.allocate(byteCount: part.count, alignment: 8)
        defer { region.deallocate() }
        part.withUnsafeBytes { region.copyMemory(from: $0) }
        let before = state
        do throws(PipeWireCursorError) {
            try state.apply(UnsafeRawBufferPointer(region))
        } catch {
            check(!error.description.isEmpty, "a refusal without words")
            check(state.pixels == before.pixels && state.width == before.width && state.height == before.height
                  && state.position?.x == before.position?.x && state.position?.y == before.position?.y
                  && state.hotspot == before.hotspot, "a refusal changed the pointer: \(error)")
            continue
        }
        check(state.width <= PointerState.maxSide && state.height <= PointerState.maxSide, "\(state.width)x\(state.height)")
        check(state.pixels.count == state.width * state.height, "\(state.pixels.count) words for \(state.width)x\(state.height)")
        if let bounds = state.bounds, let position = state.position {
            check(bounds.width == state.width && bounds.height == state.height && bounds.width > 0 && bounds.height > 0, "bounds size")
            check(bounds.x == position.x - state.hotspot.x && bounds.y == position.y - state.hotspot.y, "bounds corner")
        } else {
            check(state.position == nil || state.width == 0 || state.height == 0, "no bounds for a shown picture")
        }
    }
}
