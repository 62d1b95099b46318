#!/usr/bin/env python3
"""An aiortc WHEP viewer that offers video and a data channel (aiortc's own SCTP, RFC 8831/8832), for
DataChannelCallTests (run with the repo's venv python, inside a loopback-only network namespace).

It POSTs a recvonly VP8 + `m=application` offer, decodes the video, and on the call's data channels:
  1. "echo" (protocol screencast-echo): a string, a binary message, an empty string, and one of aiortc's own
     largest size (65536 bytes, its a=max-message-size) go out; the echoes must come back equal.
  2. "big": one message of 262144 bytes (the call's a=max-message-size) goes to the call (counted in its
     /stats), then one of 262145 bytes, sent past aiortc's own check of the call's limit: the call must
     close that channel.
  3. "bad": a string message whose bytes are not UTF-8 (PPID 51, sent past aiortc's encoder): the call must
     close that channel.
  Then "echo" must still echo, and video must still arrive (the call goes on).

Prints one JSON object: {"frames", "framesAfterFaults", "echoes": [hex of each echo...], "expected": [...],
"closed": {label: seconds after the fault}, "echoState", "echoAfterFaults": bool, "error": TEXT or null}.

Options: --url URL (the WHEP endpoint), --seconds S (the most the whole run may take, default 20).
The big and bad messages use aiortc's private queue (RTCSctpTransport._data_channel_queue): aiortc's public
send refuses both, as a correct peer should.
"""

import argparse
import asyncio
import json
import time
import urllib.request

import aioice.ice

aioice.ice.get_host_addresses = lambda use_ipv4=True, use_ipv6=True: ["127.0.0.1"]

from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription  # noqa: E402


def post_offer(url, sdp):
    request = urllib.request.Request(url, data=sdp.encode(), method="POST")
    request.add_header("Content-Type", "application/sdp")
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.read().decode()


async def wait_for(predicate, deadline):
    while not predicate():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


def push_raw(pc, channel, ppid, data):
    """Queues a message as aiortc's send would, but with any PPID and size (no checks)."""
    sctp = pc.sctp
    sctp._data_channel_queue.append((channel, ppid, data))
    asyncio.ensure_future(sctp._data_channel_flush())


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--seconds", type=float, default=20)
    args = parser.parse_args()
    deadline = time.monotonic() + args.seconds
    result = {"frames": 0, "framesAfterFaults": 0, "echoes": [], "expected": [], "closed": {}, "echoAfterFaults": False,
              "error": None}
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    pc.addTransceiver("video", direction="recvonly")
    echo = pc.createDataChannel("echo", protocol="screencast-echo")
    big = pc.createDataChannel("big")
    bad = pc.createDataChannel("bad")
    faults_at = [None]
    finishing = [False]
    frames_at_fault = [0]

    async def consume(track):
        try:
            while True:
                await track.recv()
                result["frames"] += 1
        except Exception:
            pass

    @pc.on("track")
    def on_track(track):
        asyncio.ensure_future(consume(track))

    @echo.on("message")
    def on_echo(message):
        data = message.encode() if isinstance(message, str) else message
        result["echoes"].append(("s:" if isinstance(message, str) else "b:") + data.hex()[:64] + ":%d" % len(data))

    for channel in (big, bad, echo):
        def closed(channel=channel):
            if finishing[0]:
                return  # our own close at the end
            result["closed"][channel.label] = None if faults_at[0] is None else round(time.monotonic() - faults_at[0], 3)
        channel.on("close", closed)

    try:
        await pc.setLocalDescription(await pc.createOffer())
        status, answer = await asyncio.to_thread(post_offer, args.url, pc.localDescription.sdp)
        if status != 201:
            raise RuntimeError("POST answered %d" % status)
        await pc.setRemoteDescription(RTCSessionDescription(sdp=answer, type="answer"))
        if not await wait_for(lambda: all(c.readyState == "open" for c in (echo, big, bad)), deadline):
            raise RuntimeError("channels not open: %s" % [(c.label, c.readyState) for c in (echo, big, bad)])

        sent = ["héllo, call", b"\x00\x01\x02\xff", "", bytes((i * 7) & 0xff for i in range(65536))]
        for message in sent:
            echo.send(message)
            data = message.encode() if isinstance(message, str) else message
            result["expected"].append(("s:" if isinstance(message, str) else "b:") + data.hex()[:64] + ":%d" % len(data))
        if not await wait_for(lambda: len(result["echoes"]) >= len(sent), deadline):
            raise RuntimeError("echoes missing: %d of %d" % (len(result["echoes"]), len(sent)))

        # The largest message the call takes, then one byte more (past aiortc's check of its limit).
        big.send(bytes(262144))
        await asyncio.sleep(0.3)
        faults_at[0] = time.monotonic()
        frames_at_fault[0] = result["frames"]
        push_raw(pc, big, 53, bytes(262145))
        push_raw(pc, bad, 51, b"\xc3\x28 not utf-8")
        await wait_for(lambda: "big" in result["closed"] and "bad" in result["closed"], deadline)

        echo.send("still there?")
        result["echoAfterFaults"] = await wait_for(lambda: len(result["echoes"]) > len(sent), deadline)
        result["echoes"] = result["echoes"][:len(sent)]
        await asyncio.sleep(1.0)
        result["framesAfterFaults"] = result["frames"] - frames_at_fault[0]
        result["echoState"] = echo.readyState
    except Exception as error:
        result["error"] = repr(error)
    finally:
        finishing[0] = True
        await pc.close()
    print(json.dumps(result))


asyncio.run(main())
