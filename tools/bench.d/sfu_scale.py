#!/usr/bin/env python3
"""SFU fan-out figure: one screencast-call publishing into a real Janus (Debian janus), N light subscribers
through Janus, the call's own CPU and memory (run by tools/bench-sfu inside a loopback-only namespace that
has the 127.0.0.2 veth; Janus skips loopback interfaces, see ../shared/notes/real-peers.md).

Light subscribers: aiortc peers (the VideoRoom subscriber flow of Tests/PublishingTests/Peers/
janus_subscriber.py) whose receivers count RTP packets and drop them (no jitter buffer, no decode), so 100
of them fit on this machine; SRTP is still decrypted (aiortc does it before the receiver).

For each count in --counts (default 1,100): the subscribers join one by one, then after --settle seconds the
call's CPU (utime+stime from /proc/PID/stat, % of one core) and RSS (VmRSS, VmHWM) are read over --seconds,
with the packets every subscriber counted. Prints one JSON object:
  {"runs": [{"subscribers", "joined", "callCpuPercent", "callRssMiB", "callPeakMiB", "packetsPerSubscriber":
   {"min", "median", "max"}, "callFramesEncoded", "callKbps"}], "janusCpuPercent"...}

Usage (as root, inside the namespace): sfu_scale.py --call PATH --counts 1,100 [--size 1280x720]
       sfu_scale.py --write-janus-config FOLDER   (only the Janus configuration: VideoRoom and HTTP on
                                                   127.0.0.1:8088, no preset rooms; for tools/demo --sfu)
"""

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "PublishingTests", "Peers"))
from janus_subscriber import call, poll  # noqa: E402  (also points aioice at 127.0.0.2)

from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription  # noqa: E402
from aiortc import rtcrtpreceiver  # noqa: E402

COUNTS = {}


def count_and_drop(self, packet, arrival_time_ms):
    COUNTS[id(self)] = COUNTS.get(id(self), 0) + 1


async def _count_rtp(self, packet, arrival_time_ms):
    count_and_drop(self, packet, arrival_time_ms)


rtcrtpreceiver.RTCRtpReceiver._handle_rtp_packet = _count_rtp

JANUS_LIBS = "/usr/lib/x86_64-linux-gnu/janus"
API = "http://127.0.0.1:8088/janus"
CALL_STATS = "http://127.0.0.1:18090/stats"


def write_janus_config(folder):
    plugins = ["audiobridge", "duktape", "echotest", "lua", "nosip", "recordplay", "sip", "streaming", "textroom",
               "videocall", "voicemail"]
    transports = ["websockets", "mqtt", "nanomsg", "pfunix", "rabbitmq"]
    files = {
        "janus.jcfg": 'general: { configs_folder = "%s", plugins_folder = "%s/plugins", transports_folder = "%s/transports", '
                      'events_folder = "%s/events", loggers_folder = "%s/loggers", debug_level = 3, session_timeout = 120 }\n'
                      'plugins: { disable = "%s" }\ntransports: { disable = "%s" }\nevents: { broadcast = false }\n'
                      'media: { rtp_port_range = "20000-40000" }\n' % (
                          folder, JANUS_LIBS, JANUS_LIBS, JANUS_LIBS, JANUS_LIBS,
                          ",".join("libjanus_%s.so" % p for p in plugins), ",".join("libjanus_%s.so" % t for t in transports)),
        "janus.transport.http.jcfg": 'general: { json = "plain", base_path = "/janus", http = true, port = 8088, '
                                     'ip = "127.0.0.1", https = false }\nadmin: { admin_http = false }\n',
        "janus.plugin.videoroom.jcfg": "general: { }\n",
    }
    for name, text in files.items():
        with open(os.path.join(folder, name), "w") as out:
            out.write(text)


def wait_for(check, seconds, what):
    end = time.time() + seconds
    while time.time() < end:
        try:
            if check():
                return
        except Exception:
            pass
        time.sleep(0.2)
    raise RuntimeError("timed out waiting for " + what)


def stats():
    with urllib.request.urlopen(CALL_STATS, timeout=5) as response:
        return json.loads(response.read())


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory_mib(pid):
    values = {}
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith(("VmRSS:", "VmHWM:")):
                values[line.split(":")[0]] = int(line.split()[1]) / 1024
    return values["VmRSS"], values["VmHWM"]


async def subscribe(room, peers):
    session = call(API, {"janus": "create"})["data"]["id"]
    base = "%s/%d" % (API, session)
    handle = call(base, {"janus": "attach", "plugin": "janus.plugin.videoroom"})["data"]["id"]
    listed = call("%s/%d" % (base, handle), {"janus": "message", "body": {"request": "listparticipants", "room": room}})
    publisher = [p for p in listed["plugindata"]["data"]["participants"] if p.get("publisher")][0]
    call("%s/%d" % (base, handle), {"janus": "message", "body": {
        "request": "join", "ptype": "subscriber", "room": room, "streams": [{"feed": publisher["id"]}]}})
    offer = poll(base, handle, time.time() + 10)["jsep"]
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    await pc.setRemoteDescription(RTCSessionDescription(sdp=offer["sdp"], type=offer["type"]))
    await pc.setLocalDescription(await pc.createAnswer())
    call("%s/%d" % (base, handle), {"janus": "message", "body": {"request": "start"},
                                    "jsep": {"type": "answer", "sdp": pc.localDescription.sdp}})
    peers.append((pc, base))


async def keepalive(peers):
    while True:
        await asyncio.sleep(20)
        for _, base in list(peers):
            try:
                call(base, {"janus": "keepalive"})
            except Exception:
                pass


async def measure(args, pid, count, room):
    peers = []
    COUNTS.clear()
    alive = asyncio.ensure_future(keepalive(peers))
    for _ in range(count):
        await subscribe(room, peers)
    await asyncio.sleep(args.settle)
    before = dict(COUNTS)
    cpu0, wall0, bytes0, frames0 = cpu_seconds(pid), time.time(), stats()["bytes"], stats()["frames"]["encoded"]
    await asyncio.sleep(args.seconds)
    cpu1, wall1 = cpu_seconds(pid), time.time()
    after = stats()
    rss, peak = memory_mib(pid)
    packets = [COUNTS.get(key, 0) - before.get(key, 0) for key in COUNTS] or [0]
    run = {
        "subscribers": count, "joined": len(peers), "receiving": sum(1 for p in packets if p > 0),
        "callCpuPercent": round(100 * (cpu1 - cpu0) / (wall1 - wall0), 1), "callRssMiB": round(rss, 1), "callPeakMiB": round(peak, 1),
        "packetsPerSubscriber": {"min": min(packets), "median": statistics.median(packets), "max": max(packets)},
        "callFramesEncoded": after["frames"]["encoded"] - frames0,
        "callKbps": round((after["bytes"] - bytes0) * 8 / 1000 / (wall1 - wall0), 1),
        "sfuState": after["sfu"]["state"], "callViewers": after["viewers"]["count"],
    }
    alive.cancel()
    for pc, base in peers:
        await pc.close()
        try:
            call(base, {"janus": "destroy"})
        except Exception:
            pass
    return run


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--call")
    parser.add_argument("--counts", default="1,100")
    parser.add_argument("--size", default="1280x720")
    parser.add_argument("--settle", type=float, default=5)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--write-janus-config", metavar="FOLDER", help="only write the Janus configuration there (tools/demo --sfu)")
    args = parser.parse_args()
    if args.write_janus_config:
        return write_janus_config(args.write_janus_config)
    folder = tempfile.mkdtemp(prefix="sfu-scale-")
    write_janus_config(folder)
    log = open(os.path.join(folder, "janus.log"), "w")
    janus = subprocess.Popen(["janus", "-C", os.path.join(folder, "janus.jcfg"), "-F", folder], stdout=log, stderr=log)
    callproc = None
    try:
        wait_for(lambda: call(API, {"janus": "info"}) is not None, 10, "Janus")
        room = 90
        callproc = subprocess.Popen([
            args.call, "--source", "testpattern", "--pattern-size", args.size, "--http", "127.0.0.1:18090", "--stats-interval", "0",
            "--socket", os.path.join(folder, "agent.sock"), "--ice-address", "127.0.0.2", "--ice-address", "127.0.0.1",
            "--janus", API, "--janus-room", str(room), "--janus-create-room", "--janus-display", "scale",
        ], stdout=subprocess.DEVNULL, stderr=open(os.path.join(folder, "call.log"), "w"))
        wait_for(lambda: stats()["sfu"]["state"] == "published", 20, "the call to publish")
        runs = [await measure(args, callproc.pid, int(count), room) for count in args.counts.split(",")]
        print(json.dumps({"size": args.size, "seconds": args.seconds, "runs": runs}))
    finally:
        for process in (callproc, janus):
            if process:
                process.terminate()
                try:
                    process.wait(5)
                except subprocess.TimeoutExpired:
                    process.kill()


if __name__ == "__main__":
    asyncio.run(main())
