#!/usr/bin/env python3
"""A WHIP endpoint (RFC 9725) made of aiortc, for the end-to-end tests (run with the repo's venv python).

Serves http://127.0.0.1:--port/whip: a POST with an SDP offer (Content-Type application/sdp, Authorization:
Bearer --token when one is given) is answered by an aiortc peer (recvonly) with 201, Location
/whip/resource/N and the answer; it decodes the frames of the offered video. DELETE on the Location ends that
session; the endpoint exits after the first DELETE (or after --seconds) and prints one JSON object:

  {"posts", "deletes": [paths], "refused": [[status, reason]], "frames", "width", "height",
   "firstFrameMs", "saved": PATH or null, "error": TEXT or null}

--save-last PATH writes the last decoded frame as tightly packed I420 (whep_viewer.py's i420_bytes).
aioice is pointed at 127.0.0.1 (the tests run in a loopback-only namespace).
"""

import argparse
import asyncio
import json
import time

from whep_viewer import i420_bytes  # noqa: E402  (also points aioice at 127.0.0.1)

from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription  # noqa: E402

RESULT = {"posts": 0, "deletes": [], "refused": [], "frames": 0, "width": 0, "height": 0, "firstFrameMs": None,
          "saved": None, "error": None}


class Endpoint:
    def __init__(self, args):
        self.args = args
        self.peers = {}
        self.done = asyncio.Event()
        self.last = None

    async def handle(self, reader, writer):
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
            method, path, _ = head[0].split(" ", 2)
            fields = {line.split(":", 1)[0].strip().lower(): line.split(":", 1)[1].strip() for line in head[1:] if ":" in line}
            body = await reader.readexactly(int(fields.get("content-length", "0")))
            status, headers, reply = await self.route(method, path, fields, body)
        except Exception as error:  # a bad request is answered, never a crash
            status, headers, reply = 400, {}, ("%s: %s" % (type(error).__name__, error)).encode()
        reason = {200: "OK", 201: "Created", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 405: "Method Not Allowed",
                  415: "Unsupported Media Type"}.get(status, "Status")
        lines = ["HTTP/1.1 %d %s" % (status, reason), "Content-Length: %d" % len(reply), "Connection: close"]
        lines += ["%s: %s" % item for item in headers.items()]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + reply)
        await writer.drain()
        writer.close()

    async def route(self, method, path, fields, body):
        if self.args.token and fields.get("authorization") != "Bearer " + self.args.token:
            RESULT["refused"].append([401, method + " " + path])
            return 401, {}, b"bad token"
        if path == "/whip" and method == "POST":
            if fields.get("content-type", "").split(";")[0].strip() != "application/sdp":
                return 415, {}, b"not application/sdp"
            RESULT["posts"] += 1
            index = RESULT["posts"]
            pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
            started = time.time()

            @pc.on("track")
            def on_track(track):
                async def consume():
                    while True:
                        frame = await track.recv()
                        if RESULT["frames"] == 0:
                            RESULT["firstFrameMs"] = round((time.time() - started) * 1000)
                        RESULT["frames"] += 1
                        RESULT["width"], RESULT["height"] = frame.width, frame.height
                        self.last = frame
                asyncio.ensure_future(consume())

            await pc.setRemoteDescription(RTCSessionDescription(sdp=body.decode(), type="offer"))
            await pc.setLocalDescription(await pc.createAnswer())
            location = "/whip/resource/%d" % index
            self.peers[location] = pc
            return 201, {"Content-Type": "application/sdp", "Location": location, "ETag": '"%d"' % index}, pc.localDescription.sdp.encode()
        if path.startswith("/whip/resource/") and method == "DELETE":
            RESULT["deletes"].append(path)
            pc = self.peers.pop(path, None)
            if pc is None:
                return 404, {}, b"no such session"
            await pc.close()
            self.done.set()
            return 200, {}, b""
        if path.startswith("/whip/resource/"):
            return 405, {"Allow": "DELETE"}, b""
        return 404, {}, b"not found"


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token")
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--save-last")
    args = parser.parse_args()
    endpoint = Endpoint(args)
    server = await asyncio.start_server(endpoint.handle, "127.0.0.1", args.port)
    print("listening", flush=True)
    try:
        await asyncio.wait_for(endpoint.done.wait(), args.seconds)
    except asyncio.TimeoutError:
        RESULT["error"] = "no DELETE within %.0f s" % args.seconds
    server.close()
    if endpoint.last is not None and args.save_last:
        with open(args.save_last, "wb") as out:
            out.write(i420_bytes(endpoint.last))
        RESULT["saved"] = args.save_last
    for pc in endpoint.peers.values():
        await pc.close()
    print(json.dumps(RESULT))


if __name__ == "__main__":
    asyncio.run(main())
