import CongestionControl
import Foundation
import Media
import RTP
import RTPSession
import Sharing
import TestSupport
import VideoSource
import XCTest

/// Issue 12 in memory: one shared libvpx encoder at the fast viewer's 2000 kbit/s feeds two sender chains —
/// a fast viewer (never thinned) and a slow transport-cc viewer whose target is pinned at 500 kbit/s — on a
/// real recording (window-drag at 1280×720, 15 fps). Packets go from each pacer to a VP8 depayloader and a
/// libvpx decoder; keyframe requests go back to the encoder (at most one a second, as the call spaces them).
/// No network model: the slow chain paces at its target (pacing factor 1 instead of 2.5), as if GCC had
/// found the link's rate, so what is measured is the sender's thinning, not GCC.
final class SlowViewerTests: XCTestCase {
    struct Viewer {
        var chain: RTPSenderChain
        var depayloader = VP8Depayloader()
        let decoder: VP8Decoder
        var picture = I420Buffer()
        var framesDecoded = 0
        var keyframesDecoded = 0
        var decodeErrors = 0
        var keyframeRequests = 0
        var bytes = 0
        /// Capture → sent latency of each frame's last packet, µs.
        var latencies: [UInt64] = []
        /// The decoded pictures' hashes by RTP timestamp (the fast viewer's, to compare the slow one's with).
        var hashes: [UInt32: Int] = [:]
    }

    struct Outcome {
        var slow: Viewer
        var fast: Viewer
        var encoded = 0
        var keyframesEncoded = 0
        var encodedBytes = 0
        var mismatches = 0
        var seconds: Double
        func fps(_ viewer: Viewer) -> Double { Double(viewer.framesDecoded) / seconds }
        func describe(_ name: String, _ v: Viewer) -> String {
            let chain = v.chain.report.chain
            let rate = String(format: "%.1f", fps(v))
            let kbps = v.bytes * 8 / 1000 / Int(seconds)
            let head = "\(name): \(v.framesDecoded) frames (\(rate) fps), \(v.keyframesDecoded) keyframes, \(kbps) kbps"
            let errors = "\(v.decodeErrors) decode errors, \(v.keyframeRequests) keyframe requests"
            let thinned = "thinned: \(chain.framesThinnedDroppable) droppable / \(chain.framesThinned) reference (last resort)"
            let latency = "latency mean \(meanLatencyMillis(v)) ms, max \((v.latencies.max() ?? 0) / 1000) ms"
            return head + ", " + errors + ", " + thinned + ", \(chain.referenceFramesOverBudget) references over budget, " + latency
        }
        func meanLatencyMillis(_ v: Viewer) -> Int {
            v.latencies.isEmpty ? 0 : Int(v.latencies.reduce(0, +) / UInt64(v.latencies.count) / 1000)
        }
    }

    static let pictures: [VideoFrame] = {
        (try? EncoderReplay.pictures(
            fromDump: TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/window-drag.frames").path,
            scaledTo: PictureSize(width: 1280, height: 720))) ?? []
    }()

    /// - Parameters:
    ///   - slowKbps: the slow viewer's target (and pacing rate), kbit/s.
    ///   - cadence: one reference frame in this many (nil: every frame a reference frame).
    ///   Without the cadence no droppable frame comes, and the slow chain thins reference frames at its budget
    ///   (1 s) with a keyframe, as before this change.
    func run(slowKbps: Int = 500, cadence: Int?, seconds: Double = 16) throws -> Outcome {
        let pictures = Self.pictures
        XCTAssertEqual(pictures.count, 48)
        var controller = SendSideCongestionController.Configuration.screenSender
        controller.startBitsPerSecond = slowKbps * 1000
        controller.maxBitsPerSecond = slowKbps * 1000
        let slowChain = try RTPSenderChain(configuration: .init(
            ssrc: 1, payloadType: 96, cname: "slow", pacingFactor: 1, transportWideCC: .init(extensionID: 3, controller: controller)))
        let fastChain = try RTPSenderChain(configuration: .init(ssrc: 2, payloadType: 96, cname: "fast"))
        var outcome = Outcome(slow: Viewer(chain: slowChain, decoder: try VP8Decoder()),
                              fast: Viewer(chain: fastChain, decoder: try VP8Decoder()), seconds: seconds)
        _ = outcome.slow.chain.start(nowMicros: 0, sendsMedia: true)
        _ = outcome.fast.chain.start(nowMicros: 0, sendsMedia: true)
        let encoder = try VP8Encoder(settings: VP8EncoderSettings(width: 1280, height: 720, bitrateKbps: 2000))
        var keyframeRequested = false
        var lastKeyframeAt: UInt64?
        var sinceReference = 0
        let frameInterval: UInt64 = 66_667
        var nextFrameAt: UInt64 = 0
        var index = 0
        let end = UInt64(seconds * 1e6)

        /// Releases and decodes `viewer`'s packets due by `now`; with `reference` (the fast viewer's hashes),
        /// returns how many decoded pictures differ from the fast viewer's at the same timestamp.
        func deliver(_ viewer: inout Viewer, now: UInt64, reference: [UInt32: Int]?) throws -> Int {
            var mismatches = 0
            for sent in viewer.chain.release(nowMicros: now) where sent.kind == .media {
                viewer.bytes += sent.bytes.count
                if let latency = sent.frameLatency { viewer.latencies.append(latency.latencyMicros) }
                for frame in try viewer.depayloader.insert(try RTPPacket(parsing: sent.bytes), arrivalMilliseconds: now / 1000) {
                    do {
                        guard try viewer.decoder.decode(frame.data, into: &viewer.picture) else { continue }
                    } catch {
                        viewer.decodeErrors += 1
                        continue
                    }
                    viewer.framesDecoded += 1
                    if frame.isKeyframe { viewer.keyframesDecoded += 1 }
                    var hasher = Hasher()
                    viewer.picture.bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
                    let hash = hasher.finalize()
                    if let reference {
                        if let expected = reference[frame.rtpTimestamp], expected != hash { mismatches += 1 }
                    } else {
                        viewer.hashes[frame.rtpTimestamp] = hash
                    }
                }
            }
            return mismatches
        }

        var now: UInt64 = 0
        while now < end {
            if now >= nextFrameAt {
                var frame = pictures[index % pictures.count]
                frame.captureTimestampMicros = 1_000_000 + now
                let spaced = lastKeyframeAt.map { now >= $0 + 1_000_000 } ?? true
                let keyframe = index == 0 || (keyframeRequested && spaced)
                let reference = keyframe || cadence.map { sinceReference >= $0 - 1 } ?? true
                if let encoded = try encoder.encode(frame, forceKeyframe: keyframe, updatesReferences: reference) {
                    outcome.encoded += 1
                    outcome.encodedBytes += encoded.bytes.count
                    if encoded.isKeyframe {
                        outcome.keyframesEncoded += 1
                        keyframeRequested = false
                        lastKeyframeAt = now
                    }
                    sinceReference = encoded.isDroppable ? sinceReference + 1 : 0
                    let outgoing = OutgoingVideoFrame(bytes: encoded.bytes, isKeyframe: encoded.isKeyframe,
                                                      captureMicros: encoded.captureTimestampMicros, isDroppable: encoded.isDroppable)
                    if try outcome.fast.chain.send(outgoing, nowMicros: now).keyframeRequest != nil {
                        outcome.fast.keyframeRequests += 1
                        keyframeRequested = true
                    }
                    if try outcome.slow.chain.send(outgoing, nowMicros: now).keyframeRequest != nil {
                        outcome.slow.keyframeRequests += 1
                        keyframeRequested = true
                    }
                }
                index += 1
                nextFrameAt += frameInterval
            }
            // The fast viewer first: the slow one's pictures are compared with its.
            _ = try deliver(&outcome.fast, now: now, reference: nil)
            let fastHashes = outcome.fast.hashes
            outcome.mismatches += try deliver(&outcome.slow, now: now, reference: fastHashes)
            now += 5_000
        }
        return outcome
    }

    func testTheSlowViewerIsThinnedWithoutKeyframesAndTheFastOneKeepsEveryFrame() throws {
        let period = DroppableCadencePolicy.period(highestKbps: 2000, outlierKbps: 500)
        XCTAssertEqual(period, 4)
        let on = try run(cadence: period)
        let before = try run(cadence: nil)
        let lower = try run(slowKbps: 300, cadence: DroppableCadencePolicy.period(highestKbps: 2000, outlierKbps: 300))
        let lowerBefore = try run(slowKbps: 300, cadence: nil)
        for (name, outcome) in [("500 kbps, cadence 1 in 4", on), ("500 kbps, before", before),
                                ("300 kbps, cadence 1 in 6", lower), ("300 kbps, before", lowerBefore)] {
            let kbps = outcome.encodedBytes * 8 / 1000 / Int(outcome.seconds)
            let encoderLine = "encoder \(outcome.encoded) frames, \(outcome.keyframesEncoded) keyframes, \(kbps) kbps"
            let fast = outcome.describe("fast", outcome.fast)
            let slow = outcome.describe("slow", outcome.slow)
            print("\(name): \(encoderLine)\n  \(fast)\n  \(slow)\n  slow pictures differing from the fast viewer's: \(outcome.mismatches)")
        }
        for (outcome, frames) in [(on, 4.0), (lower, 6.0)] {
            // With the cadence: no keyframe after the first, the slow viewer thinned to at least 1 frame in N,
            // every picture it shows exactly the fast viewer's; the fast viewer gets every frame.
            XCTAssertEqual(outcome.keyframesEncoded, 1)
            XCTAssertEqual(outcome.slow.keyframeRequests, 0)
            XCTAssertEqual(outcome.slow.chain.report.chain.framesThinned, 0)
            XCTAssertGreaterThan(outcome.slow.chain.report.chain.framesThinnedDroppable, 0, "the slow viewer was thinned")
            XCTAssertEqual(outcome.slow.decodeErrors, 0)
            XCTAssertEqual(outcome.mismatches, 0)
            XCTAssertGreaterThanOrEqual(outcome.fps(outcome.slow), 15.0 / frames - 0.3)
            XCTAssertEqual(outcome.fast.framesDecoded, outcome.encoded)
            XCTAssertEqual(outcome.fast.keyframesDecoded, 1)
        }
        // Before: the slow viewer's thinned reference frames cost keyframes, which the fast viewer gets too.
        for outcome in [before, lowerBefore] {
            XCTAssertGreaterThan(outcome.slow.keyframeRequests, 0)
            XCTAssertGreaterThan(outcome.keyframesEncoded, 1)
            XCTAssertEqual(outcome.fast.keyframesDecoded, outcome.keyframesEncoded)
        }
    }
}
