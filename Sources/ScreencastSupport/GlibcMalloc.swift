import Glibc

/// glibc's allocator controls from `<malloc.h>` (`mallopt(M_MMAP_THRESHOLD)`, `malloc_trim`), which Swift's
/// Glibc module leaves out: looked up once with `dlsym`. On a C library without them (musl) every call here
/// does nothing and returns false.
public enum GlibcMalloc {
    private typealias MallOpt = @convention(c) (Int32, Int32) -> Int32
    private typealias Trim = @convention(c) (Int) -> Int32

    private static let mallopt: MallOpt? = symbol("mallopt")
    private static let mallocTrim: Trim? = symbol("malloc_trim")

    private static func symbol<F>(_ name: String) -> F? {
        guard let program = dlopen(nil, RTLD_NOW), let found = dlsym(program, name) else { return nil }
        return unsafeBitCast(found, to: F.self)
    }

    /// `M_MMAP_THRESHOLD` (-3): allocations of at least `bytes` get pages of their own (`mmap`), returned to
    /// the system when freed. Setting it also turns off glibc's dynamic threshold, which otherwise rises to
    /// the size of the largest such block freed (up to 32 MiB) and from then on keeps blocks that size in
    /// the heap, where they leave high-water marks.
    /// - Returns: true when glibc took it.
    @discardableResult
    public static func setMmapThreshold(bytes: Int) -> Bool {
        guard let mallopt, bytes > 0 else { return false }
        return mallopt(-3, Int32(clamping: bytes)) == 1
    }

    /// `malloc_trim(0)`: returns the free pages of every arena to the system.
    public static func trim() { _ = mallocTrim?(0) }
}
