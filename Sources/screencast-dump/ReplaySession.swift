import FrameSocket
import FrameWire
import Foundation
import ScreencastSupport

/// One replay: waits for a reader, sends the plan (paced, or lossless as fast as possible; once, or looped
/// until interrupted), flushes, prints a summary line and decides the exit code.
///
/// - Lossless (`--as-fast-as-possible`): each frame waits for the previous one to be taken; a frame lost
///   because the reader went away ends the run at once (exit 1).
/// - Paced: a frame the reader is too slow for is dropped (newest wins) and the run goes on. When the reader
///   is gone, the run logs it once and waits up to `--wait` seconds for a reader to (re)connect, then goes on
///   where it was (pacing resumes, no burst) or gives up (exit 1).
/// - The final flush waits at most `--wait` seconds. Every exit 1 after the start prints one line that says why.
final class ReplaySession {
    private let command: ReplayCommand
    private let plan: ReplayPlan
    private let sender: FrameSender
    private let stop = StopFlag()
    /// Lossless mode: set (by the watcher) when a frame was dropped, i.e. the reader went away or refused us.
    private let readerLeft = StopFlag()
    /// Messages offered: frames, and a faulty or truncated tail when one was sent (``tailOffered``).
    private var offered = 0
    private var tailOffered = false
    private let started = SharedInstant()
    /// Paced mode: the reader went away and did not come back within `--wait`.
    private var gaveUp = false

    private var lossless: Bool { command.pacing == .asFastAsPossible }
    private var socketText: String { command.socket.string }

    init(command: ReplayCommand, plan: ReplayPlan, sender: FrameSender) {
        self.command = command
        self.plan = plan
        self.sender = sender
    }

    func run() throws -> Int32 {
        let (sender, stop) = (sender, stop)
        // Closing the sender wakes a `send` or `flush` that waits for a reader, so an interrupt is prompt.
        let signals = ShutdownSignals { _ in
            stop.set()
            sender.close()
        }
        defer {
            sender.close()
            withExtendedLifetime(signals) {}
        }
        guard try waitForFirstReader() else {
            _ = summarize()
            return ExitCode.success
        }
        let started = started
        started.setOnce(MonotonicClock.nowMicros())
        let progress = RepeatingTimer(every: RunProgress.intervalSeconds, label: "replay.progress") {
            let stats = sender.stats
            let elapsed = MonotonicClock.nowMicros() - (started.micros ?? 0)
            Console.error(RunProgress.replayLine(
                sent: stats.sentFrames, bytes: stats.sentBytes, dropped: stats.droppedFrames, elapsedMicros: elapsed))
        }
        defer { progress.cancel() }
        var watcher: RepeatingTimer?
        if lossless {
            // A drop means the reader went away (or refused us) mid-replay. A `send` may then be waiting for a
            // reader that never comes back, so the watcher closes the sender, which wakes it.
            let readerLeft = readerLeft
            watcher = RepeatingTimer(every: 0.05, label: "replay.watch") {
                if sender.stats.droppedFrames > 0 {
                    readerLeft.set()
                    sender.close()
                }
            }
        }
        defer { watcher?.cancel() }

        do {
            try sendPasses()
        } catch FrameSocketError.closed where stop.isSet || readerLeft.isSet {
            // Interrupted, or the reader left a lossless run: decided below.
        }
        var flushed = true
        let connected: Bool
        if stop.isSet || readerLeft.isSet || gaveUp {
            connected = sender.stats.isConnected
        } else {
            let now = sender.stats
            if !now.isConnected, now.bufferedBytes > 0 { noteReaderGone() }  // a frame is still waiting for a reader
            flushed = sender.flush(timeout: .microseconds(Int64(command.waitSeconds * 1e6)))
            connected = sender.stats.isConnected
        }
        watcher?.cancel()
        progress.cancel()
        return try decide(summarize(), flushed: flushed, connected: connected)
    }

    /// Waits up to `--wait` for the first reader. Returns false when interrupted first.
    private func waitForFirstReader() throws -> Bool {
        let start = MonotonicClock.nowMicros()
        while !sender.stats.isConnected {
            if stop.isSet { return false }
            if Double(MonotonicClock.nowMicros() - start) / 1e6 >= command.waitSeconds {
                throw DumpToolError.noReader(socketText, command.waitSeconds)
            }
            usleep(10_000)
        }
        return true
    }

    /// Sends every pass (one without `--loop`), then a faulty or truncated tail as is (not when looping).
    private func sendPasses() throws {
        var start = MonotonicClock.nowMicros()
        var pass: UInt64 = 0
        repeat {
            for segment in plan.segments {
                if let due = segment.due(command.pacing) {
                    while !stop.isSet, MonotonicClock.nowMicros() < start + due {
                        usleep(UInt32(min(20_000, start + due - MonotonicClock.nowMicros())))
                    }
                }
                if stop.isSet { return }
                let message = plan.message(segment, pass: pass)
                if lossless {
                    try sender.send(message)
                } else {
                    guard let paused = waitWhileReaderGone() else { return }
                    start += paused  // pacing resumes where it was, without a burst
                    // Frames due together (equal or µs-apart timestamps) would replace each other in the one
                    // pending slot before the writer takes them: give the previous frame a moment to go.
                    if let sound = segment.sound {
                        sender.offerSound(message, durationMicros: sound.durationMicros)  // queued, never replaced
                    } else {
                        _ = sender.flush(timeout: .milliseconds(5))
                        sender.offer(message)
                    }
                }
                offered += 1
            }
            pass += 1
            start = lossless ? MonotonicClock.nowMicros() : start + (plan.duration(command.pacing) ?? 0)
        } while command.loop && !stop.isSet && !readerLeft.isSet
        guard !command.loop, !stop.isSet, !readerLeft.isSet, !plan.tail.isEmpty else { return }
        let tail = Array(plan.bytes[plan.tail])
        if lossless {
            try sender.send(tail)
        } else {
            // Let the last frame go first (a tail offered now would replace it), at most `--wait`.
            _ = sender.flush(timeout: .microseconds(Int64(command.waitSeconds * 1e6)))
            guard waitWhileReaderGone() != nil else { return }
            sender.offer(tail)
        }
        offered += 1
        tailOffered = true
    }

    /// Paced mode: returns 0 at once while a reader is connected. Otherwise logs once that the reader is gone
    /// and waits up to `--wait` for one to (re)connect: returns the µs waited, or nil when none came (which
    /// sets ``gaveUp``) or the run was interrupted.
    private func waitWhileReaderGone() -> UInt64? {
        if sender.stats.isConnected { return 0 }
        let began = MonotonicClock.nowMicros()
        noteReaderGone()
        while !stop.isSet {
            if sender.stats.isConnected {
                command.logger.info("reader back", [
                    "socket": socketText, "after.s": String(format: "%.1f", Double(MonotonicClock.nowMicros() - began) / 1e6)])
                return MonotonicClock.nowMicros() - began
            }
            if Double(MonotonicClock.nowMicros() - began) / 1e6 >= command.waitSeconds {
                gaveUp = true
                return nil
            }
            usleep(10_000)
        }
        return nil
    }

    private func noteReaderGone() {
        command.logger.warning("reader gone, waiting up to \(Format.seconds(command.waitSeconds)) s", [
            "socket": socketText, "dropped": sender.stats.droppedFrames])
    }

    /// Closes the sender and prints the summary line; returns the final counters.
    private func summarize() -> FrameSender.Stats {
        sender.close()  // counts a message still pending or cut off as dropped
        let stats = sender.stats
        let elapsed = started.micros.map { MonotonicClock.nowMicros() - $0 } ?? 0
        // The tail is no frame: "offered 1 frame + a faulty tail of 37 bytes, sent 2 messages".
        let what = tailOffered
            ? "offered \(offered - 1) frame\(offered - 1 == 1 ? "" : "s") + a faulty tail of \(plan.tail.count) bytes, "
                + "sent \(stats.sentFrames) message\(stats.sentFrames == 1 ? "" : "s")"
            : "offered \(offered) frames, sent \(stats.sentFrames)"
        Console.error("replayed \(command.path): \(what) "
            + "(\(stats.sentBytes) bytes), dropped \(stats.droppedFrames), in \(Format.elapsed(elapsed)) "
            + "(\(Format.fps(stats.sentFrames, over: elapsed)))\(stop.isSet ? ", interrupted" : "")"
            + (plan.soundSegments > 0 ? "; sound messages among them: sent \(stats.sentSoundMessages), dropped \(stats.droppedSoundMessages)" : ""))
        return stats
    }

    /// Exit 0, or throws the one line that says why the run failed.
    private func decide(_ stats: FrameSender.Stats, flushed: Bool, connected: Bool) throws -> Int32 {
        if stop.isSet { return ExitCode.success }
        let (dropped, total, wait) = (stats.droppedFrames, offered, command.waitSeconds)
        let failure: ReplayFailure? =
            if gaveUp { .readerGone(dropped: dropped, offered: total, waited: wait) }
            else if lossless, readerLeft.isSet || dropped > 0 { .readerLeft(dropped: dropped, offered: total) }
            else if !flushed, connected { .flushTimedOut(dropped: dropped, offered: total, waited: wait) }
            else if !flushed { .readerGone(dropped: dropped, offered: total, waited: wait) }
            else if dropped > 0, !connected { .readerLeft(dropped: dropped, offered: total) }
            else { nil }
        if let failure { throw DumpToolError.replayFailed(socketText, failure) }
        return ExitCode.success
    }
}
