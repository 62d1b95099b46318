#!/usr/bin/env python3
"""One aiortc WHEP viewer that watches pixels of the decoded pictures (run with the repo's venv python).

It joins like whep_viewer.py, then, for each decoded frame (converted by libswscale through PyAV as a player
shows VP8: BT.601 limited range to RGB), reads the pixels given with --sample, and checks the --watch pixel
against its colour. It prints one JSON object on stdout:

  {"frames", "width", "height", "firstFrameMs",
   "ready": CLOCK_MONOTONIC seconds when --ready-file was written (the first frame decoded) or null,
   "before": {"X,Y": [R, G, B], ...} the samples of the last frame decoded before --trigger-file appeared,
   "seen": CLOCK_MONOTONIC seconds when the first frame whose --watch pixel is within 4 levels came out of
           the decoder, after the trigger, or null,
   "seenSamples": {"X,Y": [R, G, B]} of that frame, "error": TEXT or null}

Options:
  --url URL            the WHEP endpoint
  --seconds S          watch at most S seconds (default 20)
  --sample X,Y         a pixel to report (repeatable)
  --watch X,Y,R,G,B    the pixel and colour to wait for once the trigger file exists; the viewer stops 0.2 s
                       after it is seen
  --ready-file PATH    written once the first frame is decoded
  --trigger-file PATH  the test writes it right before it changes the screen
"""

import argparse
import asyncio
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import whep_viewer  # noqa: E402  (points aioice at 127.0.0.1; post_offer, delete_session)

from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription  # noqa: E402
from aiortc.mediastreams import MediaStreamError  # noqa: E402


def pixels(frame, points):
    rgb = frame.reformat(format="rgb24")
    plane = rgb.planes[0]
    data = bytes(plane)
    out = {}
    for x, y in points:
        if x < rgb.width and y < rgb.height:
            at = y * plane.line_size + 3 * x
            out["%d,%d" % (x, y)] = list(data[at:at + 3])
    return out


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--sample", action="append", default=[])
    parser.add_argument("--watch", required=True)
    parser.add_argument("--ready-file", required=True)
    parser.add_argument("--trigger-file", required=True)
    args = parser.parse_args()
    points = [tuple(int(v) for v in text.split(",")) for text in args.sample]
    wx, wy, wr, wg, wb = (int(v) for v in args.watch.split(","))
    report = {"frames": 0, "width": 0, "height": 0, "firstFrameMs": None, "ready": None, "before": None,
              "seen": None, "seenSamples": None, "error": None}
    done = asyncio.Event()

    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    pc.addTransceiver("video", direction="recvonly")
    started = time.monotonic()

    async def consume(track):
        try:
            while True:
                frame = await track.recv()
                now = time.clock_gettime(time.CLOCK_MONOTONIC)
                report["frames"] += 1
                report["width"], report["height"] = frame.width, frame.height
                if report["ready"] is None:
                    report["firstFrameMs"] = round((time.monotonic() - started) * 1000, 1)
                    report["ready"] = now
                    with open(args.ready_file, "w") as out:
                        out.write("ready\n")
                if not os.path.exists(args.trigger_file):
                    report["before"] = pixels(frame, points)
                    continue
                seen = pixels(frame, points + [(wx, wy)])
                pixel = seen.get("%d,%d" % (wx, wy))
                if pixel and max(abs(pixel[0] - wr), abs(pixel[1] - wg), abs(pixel[2] - wb)) <= 4:
                    report["seen"] = now
                    report["seenSamples"] = seen
                    await asyncio.sleep(0.2)
                    done.set()
                    return
        except MediaStreamError:
            pass
        except Exception as error:
            report["error"] = repr(error)
        done.set()

    @pc.on("track")
    def on_track(track):
        asyncio.ensure_future(consume(track))

    await pc.setLocalDescription(await pc.createOffer())
    status, answer, location = await asyncio.to_thread(whep_viewer.post_offer, args.url, "", pc.localDescription.sdp)
    if status != 201:
        raise RuntimeError("POST answered %d: %s" % (status, answer[:200]))
    await pc.setRemoteDescription(RTCSessionDescription(sdp=answer, type="answer"))
    try:
        await asyncio.wait_for(done.wait(), timeout=args.seconds)
    except asyncio.TimeoutError:
        pass
    await pc.close()
    await asyncio.to_thread(whep_viewer.delete_session, args.url, "", location)
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
