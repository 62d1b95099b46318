#!/usr/bin/env python3
"""A WHEP viewer made of aiortc peers, for the end-to-end tests (run with the repo's venv python).

Each viewer POSTs a recvonly VP8 offer (all candidates gathered) to the WHEP endpoint, applies the answer,
decodes the frames that arrive and records when they arrived. At the end it prints one JSON object on
stdout:

  {"viewers": [{"index", "frames", "width", "height", "firstFrameMs", "maxGapMs", "gapsOver500",
                "lastFrameMs", "inbound": {...getStats inbound-rtp...}, "saved": PATH or null,
                "rejoin": {"firstFrameMs", "frames", "maxGapMs"} or null, "error": TEXT or null}],
   "keyframes": VP8 keyframes handed to the decoder (all viewers of this process),
   "keyframeTimesMs": [ms since the start of watching of each one]}

Options:
  --url URL          the WHEP endpoint (http://127.0.0.1:PORT/whep)
  --token T          Authorization: Bearer T
  --viewers N        peers at once (default 1)
  --seconds S        how long to watch (default 5)
  --save-last PATH   write viewer 0's last decoded frame as raw I420 to PATH
  --save-last-rgb PATH  write viewer 0's last decoded frame as packed RGB (3 bytes a pixel, rows top to
                     bottom) to PATH, converted by libswscale (PyAV) as a player shows VP8: BT.601 limited range
  --rejoin-viewer K  viewer K leaves (close + DELETE) at --rejoin-at seconds and joins again 1 s later
  --rejoin-at S
  --offer-only       print the offer SDP and exit (for tests that tamper with it)
  --mangle-fingerprint  send an offer whose a=fingerprint is not our certificate's (DTLS must fail)
  --record-frames N  wrap aiortc's VP8 decoder: count its calls, failures and pictures, and keep the first N
                     encoded frames it was given (hex, as aiortc reassembled them from the RTP payloads);
                     reported as "decoder": {"attempts", "errors", "pictures", "lastError", "frames"}
  --until-file PATH  stop watching as soon as PATH exists (still at most --seconds)
  --together         all viewers join at once (their offers POSTed concurrently), as an office opening the
                     link in the same second; without it they join one after another
  --insecure         HTTPS without certificate checks (a --share call's self-signed certificate)
  --page URL         each viewer GETs URL (the viewer page, with its ?token=) before it POSTs its offer:
                     "pageStatus" in its result
  --poll URL         each viewer GETs URL (/stats) once a second while it watches, as the page does:
                     "polls" and "polls200" in its result
  --slow-clients N   before the viewers join, N TCP connections from --slow-source to --url's host and port
  --slow-source A    each send the 5-byte header of a TLS record announcing 16 KiB and stall; held until the
                     end ("slowClients": {"opened", "closedBeforeEnd"} in the report)
  --progress PATH    every second, append a JSON line for viewer 0 to PATH (for tools/soak):
                     {"t": CLOCK_MONOTONIC seconds, "frames", "stallsOver1000": gaps between decoded frames over
                     1 s so far, "maxGapMs" so far, "state": connection state}

  --audio            also offer audio (recvonly, before the video, as browsers order it) and decode it: "audio"
                     in viewer 0's result (see AudioReceiver.summary)

aioice skips 127.0.0.1 when it gathers host candidates, so host-address discovery is pointed at it:
tests run in a loopback-only network namespace.
"""

import argparse
import asyncio
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import aioice.ice

aioice.ice.get_host_addresses = lambda use_ipv4=True, use_ipv6=True: ["127.0.0.1"]

from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription  # noqa: E402
from aiortc.codecs import vpx  # noqa: E402
from aiortc.mediastreams import MediaStreamError  # noqa: E402

# Every VP8 frame handed to the decoder passes here: a keyframe has bit 0 of its first byte (the frame
# tag's P bit, RFC 6386 section 9.1) clear. Decoding runs on aiortc's decoder thread; appends are atomic.
KEYFRAME_TIMES = []
WATCH_START = [time.monotonic()]
_decode = vpx.Vp8Decoder.decode


def _counting_decode(self, encoded_frame):
    if encoded_frame.data and encoded_frame.data[0] & 1 == 0:
        KEYFRAME_TIMES.append(time.monotonic())
    return _decode(self, encoded_frame)


vpx.Vp8Decoder.decode = _counting_decode


DECODER_LOG = {"attempts": 0, "errors": 0, "pictures": 0, "lastError": None, "frames": []}


def record_decoder(limit):
    """Wraps aiortc's Vp8Decoder.decode to see what reaches libvpx and what comes out (for e2ee tests)."""
    from aiortc.codecs import vpx

    original = vpx.Vp8Decoder.decode

    def decode(self, encoded_frame):
        DECODER_LOG["attempts"] += 1
        if len(DECODER_LOG["frames"]) < limit:
            DECODER_LOG["frames"].append(bytes(encoded_frame.data).hex())
        try:
            frames = original(self, encoded_frame)
        except Exception as error:
            DECODER_LOG["errors"] += 1
            DECODER_LOG["lastError"] = repr(error)
            raise
        DECODER_LOG["pictures"] += len(frames)
        return frames

    vpx.Vp8Decoder.decode = decode


SSL_CONTEXT = [None]  # --insecure: an unverified context for the self-signed certificate of --share


def get_status(url, token):
    request = urllib.request.Request(url, method="GET")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=10, context=SSL_CONTEXT[0]) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except Exception as error:
        return repr(error)


def post_offer(url, token, sdp):
    request = urllib.request.Request(url, data=sdp.encode(), method="POST")
    request.add_header("Content-Type", "application/sdp")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(request, timeout=10, context=SSL_CONTEXT[0]) as response:
        location = response.headers.get("Location")
        return response.status, response.read().decode(), location


def delete_session(url, token, location):
    if not location:
        return None
    target = urllib.parse.urljoin(url, location)
    request = urllib.request.Request(target, method="DELETE")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=10, context=SSL_CONTEXT[0]) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def open_slow_clients(url, count, source):
    """--slow-clients: connections that start a TLS record (RFC 8446 section 5.1: handshake, 3.1, 16 KiB) and stall."""
    import socket
    parsed = urllib.parse.urlparse(url)
    sockets = []
    for _ in range(count):
        try:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((source, 0))
            sock.settimeout(5)
            sock.connect((parsed.hostname, parsed.port))
            sock.sendall(bytes([0x16, 0x03, 0x01, 0x40, 0x00]))
            sockets.append(sock)
        except OSError:
            pass
    return sockets


def closed_count(sockets):
    import socket
    closed = 0
    for sock in sockets:
        try:
            sock.setblocking(False)
            if sock.recv(1, socket.MSG_PEEK) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    return closed


def mangle_fingerprint(sdp):
    lines = []
    for line in sdp.split("\r\n"):
        if line.startswith("a=fingerprint:"):
            algorithm, value = line[len("a=fingerprint:"):].split(" ", 1)
            first = value[0]
            value = ("0" if first != "0" else "1") + value[1:]
            line = "a=fingerprint:" + algorithm + " " + value
        lines.append(line)
    return "\r\n".join(lines)


def rgb_bytes(frame):
    """The frame as packed RGB24 (libswscale's yuv420p → rgb24: BT.601, limited range), without numpy."""
    frame = frame.reformat(format="rgb24")
    plane = frame.planes[0]
    data = bytes(plane)
    return b"".join(data[row * plane.line_size:row * plane.line_size + 3 * frame.width] for row in range(frame.height))


def i420_bytes(frame):
    """The frame as tightly packed I420 (Y, then U, then V), without numpy."""
    frame = frame.reformat(format="yuv420p")
    out = bytearray()
    for index, plane in enumerate(frame.planes):
        width = frame.width if index == 0 else (frame.width + 1) // 2
        height = frame.height if index == 0 else (frame.height + 1) // 2
        data = bytes(plane)
        for row in range(height):
            start = row * plane.line_size
            out += data[start:start + width]
    return bytes(out)


class AudioReceiver:
    """--audio: the decoded sound of one viewer (aiortc decodes Opus with libopus through PyAV: s16, 48 kHz,
    stereo interleaved). Frames whose timestamps do not follow the one before (a lost packet, a gap) are
    counted; frequency and level are measured on the left channel after the first second."""

    SETTLE = 1.0  # seconds of sound left out of the measurements (the start of the stream)

    def __init__(self):
        self.frames = 0
        self.first = None
        self.rate = None
        self.channels = None
        self.pcm = []  # (arrival, pts, samples, bytes) after SETTLE
        self.pts_gaps = 0
        self.max_arrival_gap = 0.0
        self.previous = None  # (arrival, pts + samples)
        self.error = None

    async def consume(self, track):
        from array import array
        try:
            while True:
                frame = await track.recv()
                now = time.monotonic()
                if self.first is None:
                    self.first = now
                self.frames += 1
                self.rate = frame.sample_rate
                channels = frame.layout.channels
                self.channels = channels if isinstance(channels, int) else len(channels)
                settled = now - self.first >= self.SETTLE
                if self.previous is not None and settled:
                    if frame.pts != self.previous[1]:
                        self.pts_gaps += 1
                    self.max_arrival_gap = max(self.max_arrival_gap, now - self.previous[0])
                self.previous = (now, frame.pts + frame.samples)
                if settled:
                    data = array("h", bytes(frame.planes[0])[:frame.samples * self.channels * 2])
                    self.pcm.append(data)
        except MediaStreamError:
            pass
        except Exception as error:
            self.error = repr(error)

    def summary(self):
        left = [value for chunk in self.pcm for value in chunk[0::self.channels or 1]]
        crossings = []
        for index in range(1, len(left)):
            a, b = left[index - 1], left[index]
            if a < 0 <= b:
                crossings.append(index - 1 + (-a) / (b - a))
        frequency = None
        if len(crossings) > 2 and self.rate:
            frequency = (len(crossings) - 1) / ((crossings[-1] - crossings[0]) / self.rate)
        level = None
        if left:
            import math
            rms = math.sqrt(sum(v * v for v in left) / len(left)) / 32768
            level = 20 * math.log10(rms) if rms > 0 else None
        return {
            "frames": self.frames, "rate": self.rate, "channels": self.channels,
            "measuredSamples": len(left), "frequencyHz": None if frequency is None else round(frequency, 2),
            "levelDBFS": None if level is None else round(level, 2), "ptsGaps": self.pts_gaps,
            "maxArrivalGapMs": round(self.max_arrival_gap * 1000, 1), "error": self.error,
        }


class Session:
    """One aiortc peer connection watching the call."""

    def __init__(self, args, index):
        self.args = args
        self.index = index
        self.pc = None
        self.location = None
        self.frames = 0
        self.times = []
        self.width = 0
        self.height = 0
        self.last = None
        self.started = None
        self.first_frame = None
        self.task = None
        self.error = None
        self.connection_states = []
        self.stalls = 0
        self.gaps_over_500 = 0
        self.max_gap = 0.0
        self.page_status = None
        self.polls = []
        self.answered = None
        self.audio = AudioReceiver() if args.audio else None
        self.audio_task = None

    async def join(self, mangle=False):
        self.pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        if self.audio is not None:
            self.pc.addTransceiver("audio", direction="recvonly")
        self.pc.addTransceiver("video", direction="recvonly")
        pc = self.pc

        @pc.on("track")
        def on_track(track):
            if track.kind == "audio":
                if self.audio is not None:
                    self.audio_task = asyncio.ensure_future(self.audio.consume(track))
                return
            self.task = asyncio.ensure_future(self.consume(track))

        @pc.on("connectionstatechange")
        def on_state():
            self.connection_states.append(pc.connectionState)

        await pc.setLocalDescription(await pc.createOffer())
        offer = pc.localDescription.sdp
        if mangle:
            offer = mangle_fingerprint(offer)
        self.started = time.monotonic()
        if self.args.page:
            self.page_status = await asyncio.to_thread(get_status, self.args.page, "")
        status, answer, location = await asyncio.to_thread(post_offer, self.args.url, self.args.token, offer)
        self.answered = time.monotonic()
        if status != 201:
            raise RuntimeError("POST answered %d: %s" % (status, answer[:200]))
        self.location = location
        await pc.setRemoteDescription(RTCSessionDescription(sdp=answer, type="answer"))

    async def consume(self, track):
        try:
            while True:
                frame = await track.recv()
                now = time.monotonic()
                if self.first_frame is None:
                    self.first_frame = now
                elif self.times:
                    gap = now - self.times[-1]
                    self.max_gap = max(self.max_gap, gap)
                    if gap > 0.5:
                        self.gaps_over_500 += 1
                    if gap > 1.0:
                        self.stalls += 1
                self.frames += 1
                self.times.append(now)
                if self.args.progress and len(self.times) > 4:
                    del self.times[:-2]  # a long watch keeps only what the progress lines need
                self.width, self.height = frame.width, frame.height
                self.last = frame
        except MediaStreamError:
            pass
        except Exception as error:  # a decode failure must show in the report
            self.error = repr(error)

    async def inbound(self):
        if self.pc is None:
            return None
        try:
            report = await self.pc.getStats()
        except Exception:
            return None
        for stat in report.values():
            if stat.type == "inbound-rtp":
                return {
                    "packetsReceived": stat.packetsReceived,
                    "packetsLost": stat.packetsLost,
                    "jitter": stat.jitter,
                }
        return None

    async def leave(self):
        if self.pc is not None:
            await self.pc.close()
        if self.task is not None:
            self.task.cancel()
        if self.audio_task is not None:
            self.audio_task.cancel()
        await asyncio.to_thread(delete_session, self.args.url, self.args.token, self.location)

    def summary(self):
        # Gaps between consecutive decoded frames are counted as the frames come (with --progress only the
        # last frames' times are kept, for a long watch).
        return {
            "frames": self.frames,
            "width": self.width,
            "height": self.height,
            "firstFrameMs": None if self.first_frame is None else round((self.first_frame - self.started) * 1000, 1),
            "maxGapMs": round(self.max_gap * 1000, 1) if self.frames > 1 else None,
            "gapsOver500": self.gaps_over_500,
            "lastFrameMs": None if not self.times else round((self.times[-1] - WATCH_START[0]) * 1000, 1),
            "connectionStates": self.connection_states,
            "error": self.error,
            "pageStatus": self.page_status,
            "answerMs": None if self.answered is None else round((self.answered - self.started) * 1000, 1),
            "polls": len(self.polls),
            "polls200": sum(1 for status in self.polls if status == 200),
            "audio": None if self.audio is None else self.audio.summary(),
        }

    async def poll(self):
        while True:
            self.polls.append(await asyncio.to_thread(get_status, self.args.poll, self.args.token))
            await asyncio.sleep(1.0)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", default="")
    parser.add_argument("--viewers", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--save-last")
    parser.add_argument("--save-last-rgb")
    parser.add_argument("--rejoin-viewer", type=int, default=-1)
    parser.add_argument("--rejoin-at", type=float, default=0)
    parser.add_argument("--mangle-fingerprint", action="store_true")
    parser.add_argument("--record-frames", type=int, default=0)
    parser.add_argument("--until-file")
    parser.add_argument("--progress")
    parser.add_argument("--together", action="store_true")
    parser.add_argument("--insecure", action="store_true")
    parser.add_argument("--page")
    parser.add_argument("--poll")
    parser.add_argument("--slow-clients", type=int, default=0)
    parser.add_argument("--slow-source", default="127.0.0.2")
    parser.add_argument("--audio", action="store_true")
    args = parser.parse_args()
    if args.insecure:
        import ssl
        SSL_CONTEXT[0] = ssl._create_unverified_context()
    slow = open_slow_clients(args.url, args.slow_clients, args.slow_source) if args.slow_clients > 0 else []
    if args.record_frames > 0:
        record_decoder(args.record_frames)

    sessions = [Session(args, index) for index in range(args.viewers)]
    results = [{"index": s.index} for s in sessions]
    async def join(session, result):
        try:
            await session.join(mangle=args.mangle_fingerprint)
        except Exception as error:
            result["error"] = "join: " + repr(error)

    if args.together:
        await asyncio.gather(*(join(session, result) for session, result in zip(sessions, results)))
    else:
        for session, result in zip(sessions, results):
            await join(session, result)
    pollers = [asyncio.ensure_future(session.poll()) for session in sessions] if args.poll else []

    start = time.monotonic()
    WATCH_START[0] = start
    rejoined = None
    if 0 <= args.rejoin_viewer < len(sessions):
        await asyncio.sleep(args.rejoin_at)
        leaving = sessions[args.rejoin_viewer]
        results[args.rejoin_viewer]["beforeLeaving"] = leaving.summary()
        await leaving.leave()
        await asyncio.sleep(1.0)
        rejoined = Session(args, args.rejoin_viewer)
        try:
            await rejoined.join()
        except Exception as error:
            results[args.rejoin_viewer]["rejoinError"] = repr(error)
    remaining = args.seconds - (time.monotonic() - start)
    progress_at = time.monotonic()
    while remaining > 0:
        if args.progress and sessions and time.monotonic() >= progress_at:
            progress_at += 1.0
            viewer = sessions[0]
            with open(args.progress, "a") as out:
                out.write(json.dumps({"t": time.clock_gettime(time.CLOCK_MONOTONIC), "frames": viewer.frames,
                                      "stallsOver1000": viewer.stalls, "maxGapMs": round(viewer.max_gap * 1000, 1),
                                      "state": viewer.pc.connectionState if viewer.pc else None}) + "\n")
        if args.until_file and os.path.exists(args.until_file):
            break
        await asyncio.sleep(min(remaining, 0.05) if args.until_file or args.progress else remaining)
        remaining = args.seconds - (time.monotonic() - start)

    for poller in pollers:
        poller.cancel()
    for session, result in zip(sessions, results):
        if rejoined is not None and session.index == args.rejoin_viewer:
            result["rejoin"] = rejoined.summary()
            result["rejoin"]["inbound"] = await rejoined.inbound()
            continue
        result.update({k: v for k, v in session.summary().items() if k != "error" or v is not None or "error" not in result})
        result["inbound"] = await session.inbound()
    if args.save_last and sessions and sessions[0].last is not None:
        with open(args.save_last, "wb") as out:
            out.write(i420_bytes(sessions[0].last))
        results[0]["saved"] = args.save_last
    if args.save_last_rgb and sessions and sessions[0].last is not None:
        with open(args.save_last_rgb, "wb") as out:
            out.write(rgb_bytes(sessions[0].last))
        results[0]["savedRGB"] = args.save_last_rgb
    for session in sessions + ([rejoined] if rejoined else []):
        await session.leave()
    keyframes = [round((t - start) * 1000, 1) for t in KEYFRAME_TIMES]
    report = {"viewers": results, "keyframes": len(keyframes), "keyframeTimesMs": keyframes}
    if args.record_frames > 0:
        report["decoder"] = DECODER_LOG
    if args.slow_clients > 0:
        report["slowClients"] = {"opened": len(slow), "closedBeforeEnd": closed_count(slow)}
        for sock in slow:
            sock.close()
    print(json.dumps(report))
    sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(main())
