// swift-tools-version:6.0
// screencast: screen sharing for Linux that any WebRTC peer can watch.
// C libraries come from Debian -dev packages through one `.systemLibrary` target each.
import PackageDescription

let package = Package(
    name: "screencast",
    products: [
        .executable(name: "screencast-agent", targets: ["screencast-agent"]),
        .executable(name: "screencast-call", targets: ["screencast-call"]),
        .executable(name: "screencast-dump", targets: ["screencast-dump"]),
        .executable(name: "screencast-bench", targets: ["screencast-bench"]),
    ],
    targets: [
        // MARK: C libraries (module map + one header of static inline wrappers each)
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CYUV", providers: [.apt(["libyuv-dev"])]),  // libyuv ships no .pc file
        .systemLibrary(name: "CVPX", pkgConfig: "vpx", providers: [.apt(["libvpx-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSRTP", pkgConfig: "libsrtp2", providers: [.apt(["libsrtp2-dev"])]),
        // libnice through a .pc file of ours (by path): nice.pc's private requirements bring "-pthread",
        // which SwiftPM refuses with a warning on every build (Sources/CNice/screencast-nice.pc says more).
        .systemLibrary(
            name: "CNice", pkgConfig: Context.packageDirectory + "/Sources/CNice/screencast-nice.pc",
            providers: [.apt(["libnice-dev"])]
        ),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(
            name: "CXCB", pkgConfig: "xcb",
            providers: [.apt(["libxcb1-dev", "libxcb-shm0-dev", "libxcb-xfixes0-dev", "libxcb-damage0-dev", "libxcb-randr0-dev"])]
        ),

        // MARK: Libraries, lowest first
        .target(name: "ScreencastSupport"),
        .target(name: "FrameWire"),
        .target(name: "Media", dependencies: ["CTurboJPEG", "CYUV", "CVPX"]),
        .target(name: "FrameSocket", dependencies: ["FrameWire", "ScreencastSupport"]),
        .target(name: "Capture", dependencies: ["CXCB", "CYUV", "Media", "ScreencastSupport"]),
        .target(name: "VideoSource", dependencies: ["FrameWire", "FrameSocket", "Media", "ScreencastSupport"]),
        .target(name: "RTP"),
        .target(name: "CongestionControl", dependencies: ["RTP"]),
        .target(name: "CongestionSimulation", dependencies: ["CongestionControl", "RTP"]),
        .target(name: "WebRTC", dependencies: ["RTP", "ScreencastSupport", "COpenSSL", "CSRTP", "CNice"]),
        .target(name: "Signaling", dependencies: ["WebRTC", "ScreencastSupport", "CMicroHTTPD"]),
        .target(name: "Sharing", dependencies: ["WebRTC", "Signaling", "VideoSource", "Media", "ScreencastSupport"]),

        // MARK: Executables (thin: parse options, validate, run)
        .executableTarget(
            name: "screencast-agent",
            dependencies: ["Capture", "FrameWire", "FrameSocket", "Media", "ScreencastSupport"]
        ),
        .executableTarget(
            name: "screencast-call",
            dependencies: ["VideoSource", "FrameWire", "FrameSocket", "Media", "ScreencastSupport", "Sharing", "Signaling", "WebRTC"]
        ),
        .executableTarget(
            name: "screencast-dump",
            dependencies: ["FrameWire", "FrameSocket", "Media", "ScreencastSupport"]
        ),

        .executableTarget(
            name: "screencast-bench", dependencies: ["FrameWire", "Media", "ScreencastSupport", "WebRTC", "CXCB", "CongestionSimulation"]
        ),

        // MARK: Tests
        .target(name: "TestSupport", dependencies: ["RTP", "Media"], path: "Tests/TestSupport"),
        .testTarget(name: "FrameWireTests", dependencies: ["FrameWire", "TestSupport"]),
        .testTarget(name: "MediaTests", dependencies: ["Media", "CTurboJPEG", "TestSupport"]),
        .testTarget(
            name: "FrameSocketTests",
            dependencies: ["FrameSocket", "FrameWire", "Media", "ScreencastSupport", "TestSupport"]
        ),
        .testTarget(
            name: "DumpToolTests",
            dependencies: ["FrameWire", "FrameSocket", "Media", "ScreencastSupport", "TestSupport"]
        ),
        .testTarget(
            name: "CaptureTests",
            dependencies: [
                "Capture", "Media", "ScreencastSupport", "TestSupport", "CXCB", "CTurboJPEG", "CYUV", "FrameWire", "FrameSocket",
            ]
        ),
        .testTarget(
            name: "AgentTests",
            dependencies: ["FrameWire", "FrameSocket", "Media", "ScreencastSupport", "TestSupport"]
        ),
        .testTarget(name: "RTPTests", dependencies: ["RTP", "TestSupport"]),
        .testTarget(
            name: "CongestionControlTests", dependencies: ["CongestionControl", "CongestionSimulation", "RTP", "TestSupport"],
            exclude: ["Fixtures"]
        ),
        .testTarget(name: "WebRTCTests", dependencies: ["WebRTC", "RTP", "TestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "SignalingTests", dependencies: ["Signaling", "WebRTC", "ScreencastSupport", "TestSupport"]),
        .testTarget(
            name: "VideoSourceTests",
            dependencies: ["VideoSource", "Media", "FrameWire", "FrameSocket", "ScreencastSupport", "TestSupport"]
        ),
        .testTarget(name: "SharingTests", dependencies: ["Sharing", "WebRTC", "RTP", "Signaling", "ScreencastSupport", "TestSupport"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["FrameWire", "RTP", "WebRTC", "Media", "ScreencastSupport", "TestSupport"],
            exclude: ["Peers"]
        ),
        .testTarget(
            name: "CallTests",
            dependencies: ["FrameWire", "FrameSocket", "Media", "ScreencastSupport", "TestSupport", "VideoSource"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
