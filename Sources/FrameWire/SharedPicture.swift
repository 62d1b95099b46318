import Glibc
import Synchronization

/// The shared memory of a `BGRX-SHM` stream (Protocol/frame-wire.md §2.8): one memfd the agent creates and
/// passes once with `SCM_RIGHTS`, mapped by both sides. Layout (native byte order: both ends are on one
/// machine):
///
/// ```
/// offset 0     8 bytes  magic "SCSHMv1\0"
///        8     u32      width, pixels          12  u32  height, pixels
///        16    u32      stride, bytes (4·width) 20  u32  slots (2)
///        64    u64      slot 0 version          72  u64  slot 1 version   (seqlock words, atomic)
///        4096  slot 0: height rows of stride bytes, BGRX (B, G, R, unused), top row first
///        4096 + slotBytes  slot 1                (slotBytes = stride·height rounded up to 4096)
/// ```
///
/// The race with the reader is settled by a seqlock per slot, with no message back: the writer makes the
/// slot's version odd, writes the pixels, and makes it even again (the next even number), then sends
/// `Buffer-Memory: <generation> <slot> <version>`. It writes the two slots in turn, so the reader has a
/// whole frame interval to convert a slot; a reader that finds another version before or after its read
/// (``isIntact(slot:version:)``) drops that frame as stale: a newer one is on its way.
///
/// One owner of the descriptor and the mapping (both released in `deinit`). `@unchecked Sendable`: the
/// stored properties are immutable; the pixels are shared memory by design, guarded by the seqlock, and
/// the version words are only touched through `Atomic`.
public final class SharedPicture: @unchecked Sendable {
    /// Slots in one mapping.
    public static let slotCount = 2
    /// Bytes before slot 0 (the control block, one page).
    public static let controlBytes = 4096
    /// The largest slot accepted (named limit): 256 MiB, a 8192×8192 BGRX picture; 7680×4320 is 132.7 MB.
    public static let maximumSlotBytes = 256 << 20
    /// "SCSHMv1\0".
    public static let magic: [UInt8] = Array("SCSHMv1".utf8) + [0]

    /// The sender's number for this mapping (`Buffer-Memory`'s first field).
    public let generation: UInt64
    public let width: Int
    public let height: Int
    /// Bytes per row: 4 × width.
    public var stride: Int { width * 4 }
    /// Bytes of one slot (a multiple of 4096).
    public let slotBytes: Int
    /// Bytes mapped: ``controlBytes`` + 2 × ``slotBytes``.
    public let byteCount: Int
    /// The memfd (the writer passes it to the reader).
    public let descriptor: Int32
    private let base: UnsafeMutableRawPointer

    /// Bytes of one slot for a `width`×`height` picture, or nil above ``maximumSlotBytes``.
    public static func slotBytes(width: Int, height: Int) -> Int? {
        guard width > 0, height > 0, width <= 1 << 20, height <= 1 << 20 else { return nil }
        let bytes = width * 4 * height
        guard bytes <= maximumSlotBytes else { return nil }
        return (bytes + 4095) & ~4095
    }

    private init(descriptor: Int32, base: UnsafeMutableRawPointer, byteCount: Int, generation: UInt64, width: Int, height: Int, slotBytes: Int) {
        self.descriptor = descriptor
        self.base = base
        self.byteCount = byteCount
        self.generation = generation
        self.width = width
        self.height = height
        self.slotBytes = slotBytes
    }

    deinit {
        munmap(base, byteCount)
        close(descriptor)
    }

    /// The writer's side: a new memfd (`memfd_create`, close-on-exec, sealed against shrinking) sized and
    /// described for `width`×`height`, both versions 0.
    /// - Throws: ``SharedPictureError/tooLarge(width:height:limit:)``, ``SharedPictureError/systemCall(name:errno:)``.
    public static func create(width: Int, height: Int, generation: UInt64) throws(SharedPictureError) -> SharedPicture {
        guard let slot = slotBytes(width: width, height: height) else {
            throw .tooLarge(width: width, height: height, limit: maximumSlotBytes)
        }
        guard let create = memfdCreate else { throw .systemCall(name: "memfd_create", errno: ENOSYS) }
        let fd = create("screencast-picture", memfdCloseOnExec | memfdAllowSealing)
        guard fd >= 0 else { throw .systemCall(name: "memfd_create", errno: errno) }
        let total = controlBytes + slotCount * slot
        guard ftruncate(fd, off_t(total)) == 0 else {
            let code = errno
            close(fd)
            throw .systemCall(name: "ftruncate", errno: code)
        }
        // A reader never sees the memory shrink under it (which would be SIGBUS on its next read).
        guard fcntl(fd, fileAddSeals, sealShrink) == 0 else {
            let code = errno
            close(fd)
            throw .systemCall(name: "fcntl(F_ADD_SEALS)", errno: code)
        }
        guard let mapped = mmap(nil, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), mapped != MAP_FAILED else {
            let code = errno
            close(fd)
            throw .systemCall(name: "mmap", errno: code)
        }
        magic.withUnsafeBytes { mapped.copyMemory(from: $0.baseAddress!, byteCount: 8) }
        mapped.storeBytes(of: UInt32(width), toByteOffset: 8, as: UInt32.self)
        mapped.storeBytes(of: UInt32(height), toByteOffset: 12, as: UInt32.self)
        mapped.storeBytes(of: UInt32(width * 4), toByteOffset: 16, as: UInt32.self)
        mapped.storeBytes(of: UInt32(slotCount), toByteOffset: 20, as: UInt32.self)
        return SharedPicture(descriptor: fd, base: mapped, byteCount: total, generation: generation, width: width,
                             height: height, slotBytes: slot)
    }

    /// The reader's side: maps `descriptor` (taking ownership: closed on failure too) read-only and checks
    /// it is sealed against shrinking and describes a `width`×`height` picture (the frame's `Buffer-Width`/`Buffer-Height`).
    /// - Throws: ``SharedPictureError/tooLarge(width:height:limit:)``, ``SharedPictureError/tooSmall(bytes:needed:)``,
    ///   ``SharedPictureError/badControlBlock(_:)``, ``SharedPictureError/systemCall(name:errno:)``.
    public static func map(descriptor fd: Int32, generation: UInt64, width: Int, height: Int) throws(SharedPictureError) -> SharedPicture {
        guard let slot = slotBytes(width: width, height: height) else {
            close(fd)
            throw .tooLarge(width: width, height: height, limit: maximumSlotBytes)
        }
        let needed = controlBytes + slotCount * slot
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw .systemCall(name: "fstat", errno: code)
        }
        guard Int(info.st_mode) & Int(S_IFMT) == Int(S_IFREG), Int(info.st_size) >= needed else {
            close(fd)
            throw .tooSmall(bytes: Int(info.st_size), needed: needed)
        }
        // Memory its writer could still shrink would fault (SIGBUS) the reader's next read: refused.
        let seals = fcntl(fd, fileGetSeals)
        guard seals >= 0, seals & sealShrink != 0 else {
            close(fd)
            throw .notSealed
        }
        // Read-only: the reader never writes (atomic loads of the version words are plain loads).
        guard let mapped = mmap(nil, needed, PROT_READ, MAP_SHARED, fd, 0), mapped != MAP_FAILED else {
            let code = errno
            close(fd)
            throw .systemCall(name: "mmap", errno: code)
        }
        let picture = SharedPicture(descriptor: fd, base: mapped, byteCount: needed, generation: generation, width: width,
                                    height: height, slotBytes: slot)
        let found = (0..<8).map { mapped.load(fromByteOffset: $0, as: UInt8.self) }
        guard found == magic else { throw .badControlBlock("magic \(found), expected \"SCSHMv1\\0\"") }
        let fields = [8, 12, 16, 20].map { Int(mapped.load(fromByteOffset: $0, as: UInt32.self)) }
        guard fields == [width, height, width * 4, slotCount] else {
            throw .badControlBlock("width, height, stride, slots \(fields), expected \([width, height, width * 4, slotCount])")
        }
        return picture
    }

    /// Slot `slot`'s pixels, ``height`` rows of ``stride`` bytes.
    public func pixels(slot: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + Self.controlBytes + slot * slotBytes, count: stride * height)
    }

    /// Slot `slot`'s pixels for the writer (a mapping made by ``create(width:height:generation:)``).
    public func mutablePixels(slot: Int) -> UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(start: base + Self.controlBytes + slot * slotBytes, count: stride * height)
    }

    private func versionWord(_ slot: Int) -> UnsafeMutablePointer<Atomic<UInt64>> {
        (base + 64 + 8 * slot).assumingMemoryBound(to: Atomic<UInt64>.self)
    }

    /// The slot's version now (acquiring).
    public func version(slot: Int) -> UInt64 { versionWord(slot).pointee.load(ordering: .acquiring) }

    /// The writer starts rewriting `slot`: its version becomes odd. Returns the odd version.
    public func beginWrite(slot: Int) -> UInt64 {
        let current = version(slot: slot)
        let odd = current & 1 == 0 ? current &+ 1 : current &+ 2
        versionWord(slot).pointee.store(odd, ordering: .sequentiallyConsistent)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        return odd
    }

    /// The writer finished `slot` (begun at `odd`): its version becomes the next even number, returned
    /// for `Buffer-Memory`.
    public func endWrite(slot: Int, began odd: UInt64) -> UInt64 {
        let even = odd &+ 1
        versionWord(slot).pointee.store(even, ordering: .releasing)
        return even
    }

    /// After reading `slot`: true when it still holds `version` (not rewritten meanwhile, not being written).
    public func isIntact(slot: Int, version expected: UInt64) -> Bool {
        atomicMemoryFence(ordering: .acquiring)
        return versionWord(slot).pointee.load(ordering: .relaxed) == expected
    }

    // memfd_create(2) is not in Swift's Glibc module: looked up once in the C library.
    private typealias MemfdCreate = @convention(c) (UnsafePointer<CChar>, UInt32) -> Int32
    private static let memfdCreate: MemfdCreate? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "memfd_create") else { return nil }
        return unsafeBitCast(symbol, to: MemfdCreate.self)
    }()
    private static let memfdCloseOnExec: UInt32 = 0x0001  // MFD_CLOEXEC
    private static let memfdAllowSealing: UInt32 = 0x0002  // MFD_ALLOW_SEALING
    private static let fileAddSeals: Int32 = 1033  // F_ADD_SEALS (F_LINUX_SPECIFIC_BASE + 9)
    private static let fileGetSeals: Int32 = 1034  // F_GET_SEALS (F_LINUX_SPECIFIC_BASE + 10)
    private static let sealShrink: Int32 = 0x0002  // F_SEAL_SHRINK
}

/// Why shared picture memory could not be made or used.
public enum SharedPictureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A system call failed (its name, `errno`).
    case systemCall(name: String, errno: Int32)
    /// The picture's slot would exceed ``SharedPicture/maximumSlotBytes``.
    case tooLarge(width: Int, height: Int, limit: Int)
    /// The memory passed is smaller than the layout of the frame's size (or not a regular file).
    case tooSmall(bytes: Int, needed: Int)
    /// The control block does not say what the frame's header says.
    case badControlBlock(String)
    /// The memory is not sealed against shrinking (`F_SEAL_SHRINK`, memfd_create(2)): its writer could
    /// truncate it under the reader.
    case notSealed
    /// A frame of a new generation arrived with no descriptor received for it.
    case descriptorMissing(generation: UInt64)
    /// More descriptors arrived than a reader keeps waiting (``limit``) before a frame used them.
    case tooManyDescriptors(limit: Int)

    public var description: String {
        switch self {
        case .systemCall(let name, let code): "\(name) failed: \(String(cString: strerror(code)))"
        case .tooLarge(let width, let height, let limit): "a \(width)x\(height) BGRX slot exceeds \(limit) bytes"
        case .tooSmall(let bytes, let needed): "the memory has \(bytes) bytes, the picture's layout needs \(needed)"
        case .badControlBlock(let reason): "control block: \(reason)"
        case .notSealed: "the memory is not sealed against shrinking (F_SEAL_SHRINK)"
        case .descriptorMissing(let generation): "no memory descriptor (SCM_RIGHTS) came for generation \(generation)"
        case .tooManyDescriptors(let limit): "more than \(limit) descriptors waiting"
        }
    }
}
