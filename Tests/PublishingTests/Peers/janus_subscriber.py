#!/usr/bin/env python3
"""A Janus VideoRoom subscriber made of aiortc, for the publishing tests (run with the repo's venv python).

Over the Janus HTTP API: create a session, attach janus.plugin.videoroom, list the room's publishers, join
as a subscriber of the first (Janus sends the offer as an event), answer with aiortc, "start", decode the
frames for --seconds and print one JSON object: {"frames", "width", "height", "firstFrameMs", "publisher",
"keyframeFirst", "packetsReceived", "decoder", "error"}.

--record-frames N   wrap aiortc's VP8 decoder (whep_viewer.py's record_decoder): count its calls, failures and
                    pictures and keep the first N encoded frames as aiortc depayloaded them from the RTP that
                    Janus forwarded (hex): "decoder": {"attempts", "errors", "pictures", "lastError", "frames"}
--save-pictures PATH  append every decoded picture (at most 30) to PATH as tightly packed I420

Janus and its peers use 127.0.0.2 (a veth in the test's namespace: Janus skips loopback interfaces), so
aioice's host-address discovery is pointed there.
"""

import argparse
import asyncio
import json
import os
import random
import sys
import time
import urllib.request

import aioice.ice

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "EndToEndTests", "Peers"))
from whep_viewer import DECODER_LOG, i420_bytes, record_decoder  # noqa: E402

aioice.ice.get_host_addresses = lambda use_ipv4=True, use_ipv6=True: ["127.0.0.2"]

from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription  # noqa: E402


def call(url, body):
    body = dict(body, transaction=str(random.getrandbits(48)))
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=10) as response:
        reply = json.loads(response.read())
    if reply.get("janus") == "error":
        raise RuntimeError("Janus error %s" % reply["error"])
    return reply


def poll(url, handle, deadline):
    while time.time() < deadline:
        with urllib.request.urlopen(url + "?maxev=5&rid=%d" % int(time.time() * 1000), timeout=35) as response:
            events = json.loads(response.read())
        for event in events if isinstance(events, list) else [events]:
            if event.get("sender") == handle and "jsep" in event:
                return event
    raise RuntimeError("no offer from Janus")


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--room", type=int, required=True)
    parser.add_argument("--seconds", type=float, default=4)
    parser.add_argument("--record-frames", type=int, default=0)
    parser.add_argument("--save-pictures")
    args = parser.parse_args()
    if args.record_frames:
        record_decoder(args.record_frames)
    result = {"frames": 0, "width": 0, "height": 0, "firstFrameMs": None, "publisher": None, "keyframeFirst": None,
              "packetsReceived": 0, "decoder": None, "error": None}
    session = None
    pc = None
    try:
        session = call(args.url, {"janus": "create"})["data"]["id"]
        base = "%s/%d" % (args.url, session)
        handle = call(base, {"janus": "attach", "plugin": "janus.plugin.videoroom"})["data"]["id"]
        listed = call("%s/%d" % (base, handle), {"janus": "message", "body": {"request": "listparticipants", "room": args.room}})
        publishers = [p for p in listed["plugindata"]["data"].get("participants", []) if p.get("publisher")]
        if not publishers:
            raise RuntimeError("no publisher in room %d" % args.room)
        result["publisher"] = publishers[0].get("display")
        call("%s/%d" % (base, handle), {"janus": "message", "body": {
            "request": "join", "ptype": "subscriber", "room": args.room, "streams": [{"feed": publishers[0]["id"]}]}})
        offer = poll(base, handle, time.time() + 10)["jsep"]
        pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        started = time.time()
        frames = []

        @pc.on("track")
        def on_track(track):
            async def consume():
                while True:
                    frame = await track.recv()
                    if not frames:
                        result["firstFrameMs"] = round((time.time() - started) * 1000)
                        result["keyframeFirst"] = bool(getattr(frame, "key_frame", True))
                    frames.append(frame)
                    if args.save_pictures and len(frames) <= 30:
                        with open(args.save_pictures, "ab") as out:
                            out.write(i420_bytes(frame))
                    result["frames"] = len(frames)
                    result["width"], result["height"] = frame.width, frame.height
            asyncio.ensure_future(consume())

        await pc.setRemoteDescription(RTCSessionDescription(sdp=offer["sdp"], type=offer["type"]))
        await pc.setLocalDescription(await pc.createAnswer())
        call("%s/%d" % (base, handle), {"janus": "message", "body": {"request": "start"},
                                        "jsep": {"type": "answer", "sdp": pc.localDescription.sdp}})
        await asyncio.sleep(args.seconds)
        for stat in (await pc.getStats()).values():
            if stat.type == "inbound-rtp":
                result["packetsReceived"] = stat.packetsReceived
        if args.record_frames:
            result["decoder"] = DECODER_LOG
    except Exception as error:  # reported, not raised: the test reads the JSON
        result["error"] = "%s: %s" % (type(error).__name__, error)
    finally:
        if pc:
            await pc.close()
        if session:
            try:
                call("%s/%d" % (args.url, session), {"janus": "destroy"})
            except Exception:
                pass
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main())
