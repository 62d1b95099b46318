/// Reassembles VP8 frames from the RTP packets of one stream (RFC 7741 §4), a small jitter buffer keyed by
/// extended sequence number that tolerates loss, duplication and reordering.
///
/// A frame is emitted only when complete: a first packet with S = 1, PID = 0 (RFC 7741 §4.2), every
/// following sequence number present with the same RTP timestamp, up to a packet with the marker bit
/// (or, when a sender omits the marker, up to the packet before the next frame's first packet). Frames are
/// emitted in sequence order, never twice and never out of order.
///
/// When something blocks the next frame — a missing packet, or (before the first frame) a packet whose
/// frame began earlier — the buffer waits until the blocking sequence number is ``reorderWindow`` packets
/// behind the highest one received, or ``maxWaitMilliseconds`` have passed (by the injected arrival times),
/// then gives it up and skips to the next frame start; the next frame emitted then says
/// ``Frame/followsLoss`` so the caller can ask for a key frame (PLI). Packets arriving after their
/// sequence number was passed are counted as late and dropped.
///
/// At the start the buffer anchors on the lowest sequence number received so far and emits the first
/// complete frame from there; a packet older than that frame, arriving after it was emitted, is late
/// (a receiver cannot tell it from a join in mid-stream).
public struct VP8Depayloader: Sendable {
    /// One reassembled frame.
    public struct Frame: Sendable, Equatable {
        /// The encoded VP8 frame (descriptors removed).
        public var data: [UInt8]
        /// The 90 kHz RTP timestamp shared by the frame's packets.
        public var rtpTimestamp: UInt32
        /// From the VP8 payload header: P bit of the first byte is 0 (RFC 7741 §4.3).
        public var isKeyframe: Bool
        /// The PictureID of the first packet's descriptor, when present.
        public var pictureID: UInt16?
        public var firstSequenceNumber: UInt16
        public var lastSequenceNumber: UInt16
        /// Packets were lost or dropped since the previous emitted frame (or this is the first frame after
        /// joining mid-frame): unless this is a key frame, its references may be missing.
        public var followsLoss: Bool
    }

    /// Counters since creation.
    public struct Statistics: Sendable, Equatable {
        public var packetsReceived = 0
        /// Same sequence number received twice while still buffered.
        public var duplicates = 0
        /// Arrived after its sequence number had been emitted or given up.
        public var late = 0
        /// Sequence numbers given up as never received.
        public var lost = 0
        /// Received packets dropped because their frame could not be completed.
        public var dropped = 0
        public var framesEmitted = 0
        /// Packets whose VP8 descriptor did not parse.
        public var malformed = 0
        /// Jumps of more than ``VP8Depayloader/maxJump`` that restarted the buffer.
        public var resets = 0
    }

    private struct Stored: Sendable {
        var timestamp: UInt32
        var marker: Bool
        var isFrameStart: Bool
        var pictureID: UInt16?
        var sequenceNumber: UInt16
        /// Arrival time, ms.
        var arrival: UInt64
        var data: ArraySlice<UInt8>
    }

    /// Packets a missing sequence number may lag behind the highest received before it is given up.
    public let reorderWindow: Int
    /// Milliseconds a blocking sequence number is waited for before it is given up.
    public let maxWaitMilliseconds: UInt64
    /// A sequence number further than this from the expected one restarts the buffer.
    public static let maxJump: Int64 = 3000

    public private(set) var statistics = Statistics()

    private var unwrapper = SequenceNumberUnwrapper()
    private var buffer: [Int64: Stored] = [:]
    /// The extended sequence number of the next packet to consume.
    private var head: Int64?
    /// False until the first frame is emitted or something is given up: the head then follows the lowest
    /// sequence number received.
    private var anchored = false
    private var lossPending = false

    /// - Parameters:
    ///   - reorderWindow: packets of reordering tolerated (default 128).
    ///   - maxWaitMilliseconds: how long a missing packet is awaited (default 500 ms).
    public init(reorderWindow: Int = 128, maxWaitMilliseconds: UInt64 = 500) {
        self.reorderWindow = max(1, reorderWindow)
        self.maxWaitMilliseconds = maxWaitMilliseconds
    }

    /// The highest extended sequence number received.
    public var highestSequenceNumber: Int64? { unwrapper.highest }

    /// Adds a received packet and returns the frames it completes, oldest first.
    /// - Parameters:
    ///   - packet: an RTP packet of this stream (payload type and SSRC are the caller's to check).
    ///   - arrivalMilliseconds: arrival time on any monotonic millisecond clock (injected; drives give-up).
    /// - Throws: ``RTPError`` when the VP8 descriptor is malformed; the packet is then ignored (counted as
    ///   ``Statistics/malformed``) and the buffer is unchanged.
    public mutating func insert(_ packet: RTPPacket, arrivalMilliseconds: UInt64) throws(RTPError) -> [Frame] {
        let descriptor: VP8PayloadDescriptor
        let size: Int
        do {
            (descriptor, size) = try VP8PayloadDescriptor.parse(packet.payload)
        } catch {
            statistics.malformed += 1
            throw error
        }
        statistics.packetsReceived += 1
        let extended = unwrapper.peek(packet.sequenceNumber)
        if let head, extended < head || extended - head > Self.maxJump {
            if extended < head, head - extended <= Self.maxJump {
                // Before the first frame an earlier packet simply moves the head back.
                if anchored {
                    statistics.late += 1
                    return []
                }
            } else {
                // A jump either way far beyond any reordering: the sender restarted; start over.
                statistics.resets += 1
                statistics.dropped += buffer.count
                buffer.removeAll(keepingCapacity: true)
                unwrapper = SequenceNumberUnwrapper()
                self.head = nil
                anchored = false
                lossPending = true
            }
        }
        let key = unwrapper.unwrap(packet.sequenceNumber)
        if buffer[key] != nil {
            statistics.duplicates += 1
            return []
        }
        buffer[key] = Stored(
            timestamp: packet.timestamp, marker: packet.marker, isFrameStart: descriptor.isFrameStart,
            pictureID: descriptor.pictureID, sequenceNumber: packet.sequenceNumber, arrival: arrivalMilliseconds,
            data: packet.payload.dropFirst(size))
        if !anchored { head = min(head ?? key, key) }
        return drain(now: arrivalMilliseconds)
    }

    /// Gives up whatever has waited longer than ``maxWaitMilliseconds`` at `nowMilliseconds`, returning the
    /// frames that become emittable. Call it from a timer when no packets arrive.
    public mutating func poll(nowMilliseconds: UInt64) -> [Frame] { drain(now: nowMilliseconds) }

    /// Sequence numbers between the next expected packet and the highest received that are missing, oldest
    /// first, at most `limit` of them: what a generic NACK (RFC 4585 §6.2.1) should ask for.
    public func missingSequenceNumbers(limit: Int = 256) -> [UInt16] {
        guard let head, let highest = unwrapper.highest, highest >= head else { return [] }
        var missing: [UInt16] = []
        var sequence = head
        while sequence < highest, missing.count < limit {
            if buffer[sequence] == nil { missing.append(UInt16(truncatingIfNeeded: sequence)) }
            sequence += 1
        }
        return missing
    }

    // MARK: - Draining

    private enum Step {
        case emitted(Frame)
        /// Waiting for the given sequence number.
        case blocked(Int64)
        case progressed
        case idle
    }

    private mutating func drain(now: UInt64) -> [Frame] {
        var frames: [Frame] = []
        while true {
            switch step() {
            case .emitted(let frame):
                frames.append(frame)
            case .progressed:
                continue
            case .idle:
                return frames
            case .blocked(let sequence):
                let highest = unwrapper.highest ?? sequence
                let next = nextHeld(from: sequence)
                let since = next?.arrival ?? now
                let timedOut = (now >= since ? now - since : 0) >= maxWaitMilliseconds
                guard timedOut || highest - sequence >= Int64(reorderWindow) else { return frames }
                // A run of missing numbers became visible at once: give up as much of it as qualifies in one
                // go, so a long gap costs one pass, not one pass per number.
                var through = sequence
                if let next, next.sequence > sequence {
                    through = timedOut ? next.sequence - 1 : max(sequence, min(next.sequence - 1, highest - Int64(reorderWindow)))
                }
                giveUp(through: through)
            }
        }
    }

    /// The first packet held at or after `sequence`, with its arrival time: for a missing number, when
    /// the gap became visible; for a held packet, since when it has waited. Nil when nothing is held there.
    private func nextHeld(from sequence: Int64) -> (sequence: Int64, arrival: UInt64)? {
        guard let highest = unwrapper.highest else { return nil }
        var current = sequence
        while current <= highest {
            if let stored = buffer[current] { return (current, stored.arrival) }
            current += 1
        }
        return nil
    }

    /// One step at the head: emit a frame, drop a packet that cannot be used, or report what blocks.
    private mutating func step() -> Step {
        guard let head, let highest = unwrapper.highest, head <= highest else { return .idle }
        guard let first = buffer[head] else { return .blocked(head) }
        if !first.isFrameStart {
            // Its frame began before the head: lost (anchored), or maybe still coming (not anchored).
            guard anchored else { return .blocked(head) }
            drop(head)
            return .progressed
        }
        var last = head
        var total = first.data.count
        while true {
            let current = buffer[last]!
            if current.marker { break }
            let next = last + 1
            guard let following = buffer[next] else { return .blocked(next) }
            if following.isFrameStart || following.timestamp != first.timestamp { break }  // no marker was sent
            total += following.data.count
            last = next
            if last - head >= Int64(VP8Payloader.maxPacketsPerFrame) {
                // Beyond any frame we would send: a sender that never ends its frame. Bound the memory.
                giveUp(through: last)
                return .progressed
            }
        }
        var data: [UInt8] = []
        data.reserveCapacity(total)
        for sequence in head...last {
            data.append(contentsOf: buffer.removeValue(forKey: sequence)!.data)
        }
        let frame = Frame(
            data: data, rtpTimestamp: first.timestamp, isKeyframe: VP8FrameHeader.isKeyframe(data[...]),
            pictureID: first.pictureID, firstSequenceNumber: first.sequenceNumber,
            lastSequenceNumber: UInt16(truncatingIfNeeded: last),
            followsLoss: lossPending)
        self.head = last + 1
        anchored = true
        lossPending = false
        statistics.framesEmitted += 1
        return .emitted(frame)
    }

    /// Gives up everything from the head through `sequence`: received packets are dropped, missing ones
    /// counted lost; the head moves past `sequence` into what is now a broken frame.
    private mutating func giveUp(through sequence: Int64) {
        guard let head else { return }
        for current in head...sequence {
            if buffer.removeValue(forKey: current) != nil {
                statistics.dropped += 1
            } else {
                statistics.lost += 1
            }
        }
        self.head = sequence + 1
        anchored = true
        lossPending = true
    }

    private mutating func drop(_ sequence: Int64) {
        buffer.removeValue(forKey: sequence)
        statistics.dropped += 1
        head = sequence + 1
        lossPending = true
    }
}
