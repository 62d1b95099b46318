// swift-tools-version:6.0
// screencast: screen sharing for Linux that any WebRTC peer can watch.
// C libraries come from Debian -dev packages through one `.systemLibrary` target each.
import PackageDescription

let package = Package(
    name: "screencast",
    products: [
        .executable(name: "screencast-dump", targets: ["screencast-dump"]),
    ],
    targets: [
        // MARK: C libraries (module map + one header of static inline wrappers each)
        .systemLibrary(
            name: "CTurboJPEG",
            pkgConfig: "libturbojpeg",
            providers: [.apt(["libturbojpeg0-dev"])]
        ),

        // MARK: Libraries, lowest first
        .target(name: "ScreencastSupport"),
        .target(name: "FrameWire"),
        .target(name: "Media", dependencies: ["CTurboJPEG"]),
        .target(name: "FrameSocket", dependencies: ["FrameWire", "ScreencastSupport"]),

        // MARK: Executables (thin: parse options, validate, run)
        .executableTarget(
            name: "screencast-dump",
            dependencies: ["FrameWire", "FrameSocket", "Media", "ScreencastSupport"]
        ),

        // MARK: Tests
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "FrameWireTests", dependencies: ["FrameWire", "TestSupport"]),
        .testTarget(name: "MediaTests", dependencies: ["Media", "CTurboJPEG"]),  // CTurboJPEG: tests make 4:4:4/gray JPEGs with tjCompress2
        .testTarget(name: "FrameSocketTests", dependencies: ["FrameSocket", "FrameWire", "Media", "ScreencastSupport", "TestSupport"]),
        .testTarget(name: "DumpToolTests", dependencies: ["FrameWire", "FrameSocket", "Media", "ScreencastSupport", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
