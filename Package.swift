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
        // libpulse-simple.pc carries -pthread (SwiftPM warns): the module map links by name instead.
        .systemLibrary(name: "CPulse", providers: [.apt(["libpulse-dev"])]),
        // Opus (issue 28): the call's sound for WebRTC viewers and SFU legs (RFC 6716, RTP payload RFC 7587).
        .systemLibrary(name: "COpus", providers: [.apt(["libopus-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        // usrsctp.pc carries -DINET -DINET6 (for building the library itself), which SwiftPM refuses with a warning on
        // every build; the header is in /usr/include and the module map links usrsctp, so no pkg-config.
        .systemLibrary(name: "CUsrSCTP", providers: [.apt(["libusrsctp-dev"])]),
        // The Wayland path (issue 30): the xdg-desktop-portal ScreenCast session through libportal (a .pc file of
        // ours, as for CNice: libportal.pc's GIO requirements bring "-pthread") and the PipeWire stream it hands out.
        .systemLibrary(
            name: "CPortal", pkgConfig: Context.packageDirectory + "/Sources/CPortal/screencast-portal.pc",
            providers: [.apt(["libportal-dev", "libglib2.0-dev"])]
        ),
        .systemLibrary(
            name: "CPipeWire", pkgConfig: Context.packageDirectory + "/Sources/CPipeWire/screencast-pipewire.pc",
            providers: [.apt(["libpipewire-0.3-dev"])]
        ),
        // H.264 and containers (issue 29): libx264 and FFmpeg 5.1's libavformat/libavcodec, all GPL-2+ as Debian
        // builds them (README: Licence).
        // x264.pc carries -DX264_API_IMPORTS (Windows only), which SwiftPM refuses with a warning on every build;
        // the header is in /usr/include and the module map links x264, so no pkg-config.
        .systemLibrary(name: "CX264", providers: [.apt(["libx264-dev"])]),
        .systemLibrary(name: "CAVCodec", pkgConfig: "libavcodec", providers: [.apt(["libavcodec-dev", "libavutil-dev"])]),
        .systemLibrary(name: "CAVFormat", pkgConfig: "libavformat", providers: [.apt(["libavformat-dev"])]),
        .target(name: "CAVLog", dependencies: ["CAVCodec"]),  // FFmpeg's variadic log callback, in C
        .systemLibrary(
            name: "CXCB", pkgConfig: "xcb",
            providers: [.apt(["libxcb1-dev", "libxcb-shm0-dev", "libxcb-xfixes0-dev", "libxcb-damage0-dev", "libxcb-randr0-dev", "libxcb-composite0-dev"])]
        ),

        // MARK: Libraries, lowest first
        .target(name: "ScreencastSupport"),
        .target(name: "FrameWire"),
        .target(name: "Media", dependencies: ["CTurboJPEG", "CYUV", "CVPX"]),
        .target(name: "FrameSocket", dependencies: ["FrameWire", "ScreencastSupport"]),
        // The pointer in a PipeWire buffer's SPA_META_Cursor (the portal's cursor mode METADATA): a bounds-checked parser.
        .target(name: "PipeWireCursor", dependencies: ["CPipeWire"]),
        .target(name: "Capture", dependencies: ["CXCB", "CPortal", "CPipeWire", "CPulse", "CYUV", "FrameWire", "Media", "PipeWireCursor", "ScreencastSupport"]),
        // H.264 (libx264): the encoder and its rules (bitrate, keyframe cadence); the RTMP and MP4 outputs' codec.
        .target(name: "H264", dependencies: ["CX264", "Media"]),
        // Streams of the H.264 encoding through libavformat: RTMP destinations (FLV, reconnects, send queue)
        // and fragmented MP4 recordings.
        .target(name: "Streaming", dependencies: ["CAVFormat", "CAVCodec", "CAVLog", "Media", "ScreencastSupport", "AudioSource"]),
        // The call's one shared audio source (issue 28): the agent's sound, else silence or a test tone, 10-ms frames.
        .target(name: "AudioSource", dependencies: ["FrameWire", "ScreencastSupport"]),
        // The call's Opus encoder (libopus): 10-ms AudioFrames in, 10- or 20-ms Opus packets out.
        .target(name: "OpusCodec", dependencies: ["AudioSource", "COpus"]),
        // AAC-LC of the call's sound (issue 29): FFmpeg's native encoder, for RTMP (FLV) and MP4.
        .target(name: "AAC", dependencies: ["CAVCodec", "AudioSource"]),
        .target(name: "VideoSource", dependencies: ["FrameWire", "FrameSocket", "Media", "ScreencastSupport"]),
        .target(name: "RTP"),
        .target(name: "CongestionControl", dependencies: ["RTP"]),
        .target(name: "CongestionSimulation", dependencies: ["CongestionControl", "RTP"]),
        // The WebRTC layer, one module per job: RTPSession (sender features) and SDP are pure; ICE runs
        // libnice; DTLS (OpenSSL) and SRTP (libsrtp2) turn bytes into bytes; PeerConnection ties them up.
        .target(name: "RTPSession", dependencies: ["RTP", "CongestionControl", "ScreencastSupport"]),
        .target(name: "SDP"),
        .target(name: "ICE", dependencies: ["SDP", "ScreencastSupport", "CNice"]),
        .target(name: "SRTP", dependencies: ["CSRTP"]),
        .target(name: "DTLS", dependencies: ["SDP", "SRTP", "COpenSSL"]),
        // SCTP over DTLS (RFC 8261) by usrsctp, and the data channels on it (RFC 8831, DCEP RFC 8832).
        .target(name: "DataChannel", dependencies: ["CUsrSCTP", "ScreencastSupport"]),
        .target(
            name: "PeerConnection",
            dependencies: ["RTP", "RTPSession", "CongestionControl", "SDP", "ICE", "DTLS", "SRTP", "DataChannel", "ScreencastSupport"]
        ),
        .target(name: "Signaling", dependencies: ["ScreencastSupport", "CMicroHTTPD"]),
        .target(name: "FrameCrypto", dependencies: ["COpenSSL"]),
        .target(
            name: "Sharing", dependencies: ["PeerConnection", "ICE", "DTLS", "SDP", "RTPSession", "Signaling", "VideoSource", "Media", "ScreencastSupport", "FrameCrypto"]
        ),
        // Publishing to an SFU: WHIP (RFC 9725) and the Janus VideoRoom over HTTP (libcurl), an offering peer.
        .target(
            name: "Publishing",
            dependencies: ["CCurl", "PeerConnection", "ICE", "DTLS", "SDP", "RTPSession", "Media", "ScreencastSupport"]
        ),
        // The call: its tracks, their encodings and the outputs that consume them (viewers, SFU leg, recorder),
        // E2EE and key rotation, the HTTP server and /stats, composed from a configuration; tested in-process.
        .target(
            name: "Call",
            dependencies: [
                "VideoSource", "Sharing", "Signaling", "Publishing", "PeerConnection", "ICE", "DTLS", "FrameCrypto", "Media", "ScreencastSupport",
                "H264", "Streaming", "AudioSource", "OpusCodec", "RTPSession", "AAC",
            ]
        ),

        // MARK: Executables (thin: parse options, validate, run)
        .executableTarget(
            name: "screencast-agent",
            dependencies: ["Capture", "FrameWire", "FrameSocket", "Media", "ScreencastSupport"]
        ),
        .executableTarget(
            name: "screencast-call",
            dependencies: [
                "Call", "VideoSource", "FrameSocket", "Media", "ScreencastSupport", "Signaling", "ICE", "FrameCrypto", "PeerConnection", "Publishing",
                "Streaming", "AudioSource", "OpusCodec",
            ]
        ),
        .executableTarget(
            name: "screencast-dump",
            dependencies: ["FrameWire", "FrameSocket", "Media", "ScreencastSupport"]
        ),

        .executableTarget(
            name: "screencast-bench", dependencies: ["Publishing", "FrameWire", "Media", "ScreencastSupport", "VideoSource", "ICE", "DTLS", "SRTP", "RTP", "SDP", "CXCB", "CYUV", "CongestionSimulation", "FrameCrypto", "AudioSource", "OpusCodec"]
        ),

        // MARK: Tests
        .target(name: "TestSupport", dependencies: ["RTP", "Media", "SDP"], path: "Tests/TestSupport"),
        .target(name: "XTestSupport", dependencies: ["CXCB", "Media", "TestSupport"], path: "Tests/XTestSupport"),
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
                "Capture", "Media", "ScreencastSupport", "TestSupport", "XTestSupport", "CXCB", "CTurboJPEG", "CYUV", "FrameWire", "FrameSocket",
                "PipeWireCursor", "CPipeWire",
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
        .testTarget(name: "RTPSessionTests", dependencies: ["RTPSession", "RTP", "CongestionControl", "TestSupport"]),
        .testTarget(name: "SDPTests", dependencies: ["SDP", "TestSupport"]),
        .testTarget(name: "ICETests", dependencies: ["ICE", "SDP", "ScreencastSupport", "TestSupport"]),
        .testTarget(name: "SRTPTests", dependencies: ["SRTP", "RTP", "TestSupport"]),
        .testTarget(name: "DTLSTests", dependencies: ["DTLS", "SDP", "SRTP", "RTP", "TestSupport"]),
        .testTarget(name: "DataChannelTests", dependencies: ["DataChannel", "ScreencastSupport", "TestSupport"]),
        .testTarget(
            name: "PeerConnectionTests",
            dependencies: ["PeerConnection", "RTPSession", "SDP", "ICE", "DTLS", "SRTP", "RTP", "DataChannel", "ScreencastSupport", "TestSupport"]
        ),
        .testTarget(
            name: "SignalingTests", dependencies: ["Signaling", "Sharing", "SDP", "ScreencastSupport", "TestSupport", "DTLS"]
        ),
        .testTarget(
            name: "VideoSourceTests",
            dependencies: ["VideoSource", "Media", "FrameWire", "FrameSocket", "ScreencastSupport", "TestSupport"]
        ),
        .testTarget(
            name: "SharingTests",
            dependencies: ["Sharing", "PeerConnection", "ICE", "RTP", "Signaling", "ScreencastSupport", "TestSupport", "FrameCrypto", "Media", "VideoSource"]
        ),
        .testTarget(
            name: "PublishingTests",
            dependencies: ["Publishing", "PeerConnection", "Signaling", "Media", "ICE", "DTLS", "SDP", "RTP", "RTPSession", "ScreencastSupport", "TestSupport", "FrameCrypto"],
            exclude: ["Peers"]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["FrameWire", "RTP", "Media", "ScreencastSupport", "TestSupport", "XTestSupport", "FrameCrypto"],
            exclude: ["Peers"]
        ),
        .testTarget(name: "FrameCryptoTests", dependencies: ["FrameCrypto", "TestSupport"], exclude: ["Vectors"]),
        .testTarget(
            name: "CallTests",
            dependencies: ["Call", "FrameWire", "FrameSocket", "Media", "ScreencastSupport", "Signaling", "TestSupport", "VideoSource"]
        ),
        .testTarget(name: "ScreencastSupportTests", dependencies: ["ScreencastSupport"]),
        .testTarget(name: "OpusCodecTests", dependencies: ["OpusCodec", "AudioSource", "COpus"]),
        .testTarget(name: "AudioSourceTests", dependencies: ["AudioSource", "FrameWire", "ScreencastSupport"]),
        .testTarget(name: "StreamingTests", dependencies: ["Streaming", "H264", "AAC", "AudioSource", "Call", "Media", "VideoSource", "ScreencastSupport", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
