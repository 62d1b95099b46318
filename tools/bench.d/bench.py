#!/usr/bin/env python3
"""The benchmark run behind tools/bench (run by it inside a loopback-only network namespace).

Phases, in order (each bounded; everything it starts is stopped at the end or on a signal):
  micro    screencast-bench stages; screen contents recorded from Xvfb with the agent, then VP8-encoded
  e2e      agent + call on a live 1080p Xvfb (scrolling text), one aiortc WHEP viewer: capture → RTP-sent
           latency, CPU per process, peak RSS, drops; in a full run it lasts 10 minutes and is the memory soak
  compare  the same contents through ours (agent + call, one light viewer), ffmpeg x11grab+libvpx and
           GStreamer ximagesrc+vp8enc, interleaved: CPU per second of screen time
  scale    the call (looping a recorded 1080p dump) with 0, 1, 4, 16 light viewers: CPU per viewer, RSS
  g2g      (not in the default) glass to glass against Chrome's own screen share, g2g.py
Writes one JSON document; report.py turns it into the table and BENCHMARKS.md.
"""

import argparse
import datetime
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import g2g  # noqa: E402
import g2g_report  # noqa: E402
import procs  # noqa: E402
import report  # noqa: E402
import xscene  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(REPO, ".build", "release")
BENCH, AGENT, CALL = (os.path.join(BIN, n) for n in ("screencast-bench", "screencast-agent", "screencast-call"))
VENV_PYTHON = os.path.join(REPO, "venv", "bin", "python")
WHEP_VIEWER = os.path.join(REPO, "Tests", "EndToEndTests", "Peers", "whep_viewer.py")
WIDTH, HEIGHT, FPS = 1920, 1080, 30
# The call's default CBR target at 1920x1080, 30 fps (width × height × fps × 0.08 bits): ffmpeg and
# GStreamer get the same.
BITRATE_KBPS = round(WIDTH * HEIGHT * FPS * 0.08 / 1000)

MODES = {
    "quick": dict(repeat=3, sizes=[(1920, 1080)], record_seconds=2.0, extra_scenes=False, max_frames=60,
                  e2e_warm=2, e2e_window=8, e2e_local_window=8, soak_seconds=None, profile_seconds=0, compare_rounds=1, compare_warm=1.0,
                  compare_window=2, compare_static_window=3, scale_counts=[0, 1, 4, 16], scale_warm=1.5, scale_window=3,
                  limit=600),
    # The end-to-end run is the memory soak: RSS at 1 minute and at 10 minutes after streaming started, the
    # latency/CPU window in between, then a 10 s perf profile before the 10-minute reading.
    "full": dict(repeat=5, sizes=[(1920, 1080), (3840, 2160)], record_seconds=3.0, extra_scenes=True, max_frames=90,
                 e2e_warm=5, e2e_window=None, e2e_local_window=40, soak_seconds=600, profile_seconds=10, compare_rounds=2, compare_warm=3, compare_window=5,
                 compare_static_window=8, scale_counts=[0, 1, 4, 16], scale_warm=3, scale_window=8, limit=1320),
}


def log(message):
    sys.stderr.write("bench: %s\n" % message)
    sys.stderr.flush()


def run_bench_json(args, timeout=600):
    proc = procs.start("screencast-bench", [BENCH, "--json"] + args, stdout_path=WORK.path("bench-out.json"),
                       log_path=WORK.path("bench-err.log"))
    if proc.wait(timeout) is None:
        proc.stop()
        raise RuntimeError("screencast-bench %s timed out" % " ".join(args))
    proc.stop()
    if proc.process.returncode != 0:
        raise RuntimeError("screencast-bench %s failed: %s" % (" ".join(args), proc.log()[-2000:]))
    return json.loads(proc.stdout())


class Work:
    def __init__(self, keep):
        self.dir = tempfile.mkdtemp(prefix="screencast-bench.")
        self.keep = keep

    def path(self, name):
        return os.path.join(self.dir, name)


# MARK: - The processes under test

class Call:
    """screencast-call serving WHEP on 127.0.0.1 (a free port), ICE on 127.0.0.1 only."""

    def __init__(self, name, socket_path=None, extra=(), debug=False):
        argv = [CALL, "--http", "127.0.0.1:0", "--ice-address", "127.0.0.1", "--stats-interval", "0",
                "--log-level", "debug" if debug else "info"]
        if socket_path:
            argv += ["--socket", socket_path]
        argv += list(extra)
        self.argv = argv
        self.proc = procs.start("call", argv, log_path=WORK.path(name + "-call.log"))
        line = procs.wait_for(lambda: next((l for l in self.proc.log().splitlines() if "viewer page" in l), None), 15)
        match = re.search(r"whep=http://127\.0\.0\.1:(\d+)/whep", line or "")
        if not match:
            self.proc.stop()
            raise RuntimeError("the call did not start:\n" + self.proc.log()[-3000:])
        self.port = int(match.group(1))
        self.whep = "http://127.0.0.1:%d/whep" % self.port

    def stats(self):
        return procs.http_json("http://127.0.0.1:%d/stats" % self.port)

    def connected(self, count):
        try:
            viewers = self.stats()["viewers"]
            peers = viewers["peers"]
            return viewers["connected"] >= count and sum(1 for p in peers if p["framesSent"] > 0) >= count
        except Exception:
            return False


def start_agent(name, display, socket_path, wire="jpeg", fps=FPS):
    """The agent on `display` at `fps`; `wire` is its `--format`: jpeg (the default, iOS-compatible wire), i420
    (raw planes for a local call, no JPEG round trip) or shm (the picture in memory shared with the call)."""
    argv = [AGENT, "--display", display, "--socket", socket_path, "--fps", str(fps), "--stats-interval", "1"]
    if wire != "jpeg":
        argv += ["--format", wire]
    return procs.start("agent", argv, log_path=WORK.path(name + "-agent.log")), argv


def agent_totals(log_text):
    """The last stats line's totals (captured, sent, dropped) and the mean jpeg_ms over the lines."""
    totals, jpeg = {}, []
    for line in log_text.splitlines():
        if " stats " in line or " summary " in line:
            for key in ("captured", "sent", "dropped"):
                m = re.search(r"\b%s=(\d+)" % key, line)
                if m:
                    totals[key] = int(m.group(1))
            m = re.search(r"\bjpeg_ms=([\d.]+)", line)
            if m and " stats " in line and float(m.group(1)) > 0:
                jpeg.append(float(m.group(1)))
    return totals, jpeg


class Window:
    """CPU (user+sys) and memory of some processes over a measured interval."""

    def __init__(self, processes):
        self.processes = processes
        self.t0 = procs.now_micros()
        self.cpu0 = {name: p.cpu() for name, p in processes.items()}
        self.busy0 = procs.system_busy()
        self.peak_rss = {name: 0.0 for name in processes}
        self.samples = []

    def sample(self):
        t = (procs.now_micros() - self.t0) / 1e6
        row = {"t": round(t, 2)}
        for name, p in self.processes.items():
            rss, _ = p.memory()
            row[name] = round(rss, 2)
            self.peak_rss[name] = max(self.peak_rss[name], rss)
        self.samples.append(row)
        return row

    def sleep(self, seconds, every=1.0, hook=None):
        end = time.monotonic() + seconds
        while True:
            self.sample()
            if hook:
                hook((procs.now_micros() - self.t0) / 1e6)
            left = end - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(every, left))

    def finish(self):
        self.t1 = procs.now_micros()
        self.seconds = (self.t1 - self.t0) / 1e6
        self.sample()
        out = {}
        for name, p in self.processes.items():
            rss, hwm = p.memory()
            used = p.cpu() - self.cpu0[name]
            out[name] = {"cpuSeconds": round(used, 3), "cpuPerSecond": round(used / self.seconds, 4),
                         "rssMiB": round(rss, 1), "peakRssMiB": round(max(hwm, self.peak_rss[name]), 1)}
        # The whole machine's busy time, and what of it the watched processes do not explain (the scene's
        # clients, the bench itself, and anyone else's work on a shared machine).
        self.system = round((procs.system_busy() - self.busy0) / self.seconds, 3)
        self.other = round(self.system - sum(v["cpuPerSecond"] for v in out.values()), 3)
        return out


def percentiles(values):
    if not values:
        return None
    ordered = sorted(values)

    def at(p):
        return procs.nearest_rank(ordered, p)
    return {"count": len(ordered), "p50": at(0.5), "p95": at(0.95), "p99": at(0.99), "max": ordered[-1],
            "mean": round(sum(ordered) / len(ordered), 3)}


def frame_sent_latencies(log_text, t0, t1, with_times=False):
    """Latencies (ms) of 'frame sent' debug lines whose send time lies in [t0, t1] (µs); with_times: (µs, ms) pairs."""
    out = []
    for m in re.finditer(r"frame sent .*?capture_us=(\d+) sent_us=(\d+) latency_us=(\d+)", log_text):
        sent = int(m.group(2))
        if t0 <= sent <= t1:
            out.append((sent, int(m.group(3)) / 1000) if with_times else int(m.group(3)) / 1000)
    return out


def latency_stages(log_text, t0, t1):
    """Where capture → RTP-sent goes, per frame sent in [t0, t1] (µs), from the call's debug lines: the
    frame server's `frame` (received_us), the encoder's `frame encoded` (start_us, end_us) and the peer's
    `frame sent` (sent_us), joined on the capture time. Percentiles (ms) of each stage."""
    received, encoded, sent = {}, {}, {}
    for m in re.finditer(r" frame connection=.*?capture_us=(\d+) received_us=(\d+)", log_text):
        received[int(m.group(1))] = int(m.group(2))
    for m in re.finditer(r"frame encoded capture_us=(\d+) start_us=(\d+) end_us=(\d+)", log_text):
        encoded[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
    for m in re.finditer(r"frame sent .*?capture_us=(\d+) sent_us=(\d+)", log_text):
        if t0 <= int(m.group(2)) <= t1:
            sent[int(m.group(1))] = int(m.group(2))
    stages = {"agent: grab → JPEG/I420 → socket → call has the frame": [], "call: JPEG decode (JPEG wire), wait for the encoder": [],
              "call: VP8 encode": [], "call: packetize, pace, SRTP, send": []}
    for capture, sent_at in sent.items():
        if capture not in received or capture not in encoded:
            continue
        start, end = encoded[capture]
        for name, value in zip(stages, (received[capture] - capture, start - received[capture], end - start, sent_at - end)):
            stages[name].append(value / 1000)
    return {name: percentiles(values) for name, values in stages.items() if values}


def latency_by_minute(timed, t0):
    """Percentiles of (µs, ms) pairs per minute after t0: shows when a long run was disturbed."""
    minutes = {}
    for sent, ms in timed:
        minutes.setdefault(int((sent - t0) / 60e6), []).append(ms)
    return [dict(minute=k, **percentiles(v)) for k, v in sorted(minutes.items()) if len(v) >= 30]


def delta(after, before, keys):
    return {k: after.get(k, 0) - before.get(k, 0) for k in keys}


# MARK: - Phases

def phase_micro(cfg, results):
    log("micro: stages without display")
    stages = ["parse-1080p", "parse-tiny", "jpeg-encode", "rotation", "range", "vp8-unchanged", "frame-crypto"]
    micro = run_bench_json(sum((["--stage", s] for s in stages), []) + ["--repeat", str(cfg["repeat"])])
    dumps = {}
    for width, height in cfg["sizes"]:
        label = "%dp" % height
        xvfb = xscene.Xvfb(width, height)
        try:
            scenes = xscene.SCENES + (xscene.EXTRA_SCENES if cfg["extra_scenes"] and height == 1080 else [])
            for name in scenes:
                scene = xscene.Scene(xvfb, name)
                try:
                    time.sleep(1.0)
                    path = WORK.path("%s-%s.frames" % (name, label))
                    log("micro: recording %s at %dx%d" % (name, width, height))
                    agent = procs.start("agent", [AGENT, "--display", xvfb.display, "--output", path, "--fps", str(FPS),
                                                  "--duration", str(cfg["record_seconds"]), "--stats-interval", "0",
                                                  "--log-level", "warn"], log_path=WORK.path("record.log"))
                    if agent.wait(60) is None or agent.process.returncode != 0:
                        raise RuntimeError("recording %s failed: %s" % (name, agent.log()[-1000:]))
                    agent.stop()
                    dumps["%s-%s" % (name, label)] = path
                    if name in ("static", "scrolling"):
                        for m in run_bench_json(["--stage", "shm-capture", "--display", xvfb.display, "--repeat", str(cfg["repeat"])]):
                            m["content"] = name
                            m["stage"] = m["stage"] + (" (%s screen)" % name if "JPEG" in m["stage"] else "")
                            if "SHM" in m["stage"] and any(x["stage"] == m["stage"] for x in micro):
                                continue
                            micro.append(m)
                finally:
                    scene.stop()
        finally:
            xvfb.stop()
    log("micro: JPEG decode and VP8 encode of %d recorded contents" % len(dumps))
    content_args = sum((["--content", "%s=%s" % (k, v)] for k, v in dumps.items()), [])
    micro += run_bench_json(["--stage", "jpeg-decode", "--stage", "vp8", "--repeat", str(cfg["repeat"]),
                             "--max-frames", str(cfg["max_frames"])] + content_args, timeout=900)
    results["micro"] = micro
    results["dumps"] = {k: {"path": v, "bytes": os.path.getsize(v)} for k, v in dumps.items()}
    return dumps


def phase_e2e(cfg, results, wire="jpeg"):
    """The end-to-end run. With the default JPEG wire it is also the memory soak (full run); `wire="i420"`
    (phase `e2e-local`) is a shorter latency/CPU window with the agent sending raw I420 planes."""
    key = {"jpeg": "e2e", "i420": "e2eLocal", "shm": "e2eShm"}[wire]
    soak = cfg.get("soak_seconds") if wire == "jpeg" else None
    window_length = cfg["e2e_window"] if wire == "jpeg" else cfg["e2e_local_window"]
    log("e2e: agent (%s wire) + call at %dx%d, %d fps, scrolling text, one aiortc viewer, %d s" % (
        wire, WIDTH, HEIGHT, FPS, soak or window_length))
    xvfb = xscene.Xvfb(WIDTH, HEIGHT)
    scene = xscene.Scene(xvfb, "scrolling")
    sock = WORK.path(key + ".sock")
    call = agent = viewer = None
    try:
        call = Call(key, sock, debug=True)
        agent, agent_argv = start_agent(key, xvfb.display, sock, wire)
        if not procs.wait_for(lambda: call.stats()["frames"]["encoded"] > 0, 15):
            raise RuntimeError("no frame encoded:\n" + agent.log()[-2000:])
        streaming = time.monotonic()  # the soak's clock: RSS at 1 and 10 minutes after the first encoded frame
        viewer_seconds = (soak or cfg["e2e_warm"] + window_length + cfg["profile_seconds"]) + 8
        viewer_argv = [VENV_PYTHON, WHEP_VIEWER, "--url", call.whep, "--seconds", str(viewer_seconds)]
        viewer = procs.start("viewer", viewer_argv, log_path=WORK.path(key + "-viewer.log"), stdout_path=WORK.path(key + "-viewer.json"))
        if not procs.wait_for(lambda: call.connected(1), 30, 0.2):
            raise RuntimeError("the aiortc viewer did not connect:\n" + viewer.log()[-2000:])
        time.sleep(cfg["e2e_warm"])
        stats0 = call.stats()
        agent0, _ = agent_totals(agent.log())
        window = Window({"agent": agent, "call": call.proc, "viewer": viewer, "xvfb": xvfb_proc(xvfb)})
        early = {}
        rss_timeline = []

        def at_minute(_t):
            since = time.monotonic() - streaming
            rss_timeline.append((since, call.proc.memory()[0], agent.memory()[0]))
            if soak and not early and since >= 60:
                early.update({"t": round(since, 1), "callRssMiB": round(call.proc.memory()[0], 1),
                              "agentRssMiB": round(agent.memory()[0], 1)})
        window_seconds = soak - cfg["profile_seconds"] - (time.monotonic() - streaming) if soak else window_length
        window.sleep(window_seconds, every=5.0 if window_seconds > 60 else 1.0, hook=at_minute)
        usage = window.finish()
        stats1 = call.stats()
        agent1, jpeg_ms = agent_totals(agent.log())
        if cfg["profile_seconds"]:
            results["profile" if wire == "jpeg" else "profileLocal"] = profile({"call": call.proc, "agent": agent}, cfg["profile_seconds"])
        if soak:
            procs.wait_for(lambda: time.monotonic() - streaming >= soak, soak)
            at_minute(0)
            end = {"t": round(time.monotonic() - streaming, 1), "callRssMiB": round(call.proc.memory()[0], 1),
                   "agentRssMiB": round(agent.memory()[0], 1)}
        viewer.wait(viewer_seconds + 30)
        viewer_report = json.loads(viewer.stdout().strip().splitlines()[-1]) if viewer.stdout().strip() else {}
        timed = frame_sent_latencies(call.proc.log(), window.t0, window.t1, with_times=True)
        latencies = [ms for _, ms in timed]
        frames0, frames1 = stats0["frames"], stats1["frames"]
        encoded = frames1["encoded"] - frames0["encoded"]
        received = frames1["received"] - frames0["received"]
        peer = (stats1["viewers"]["peers"] or [{}])[0]
        for name, frames in (("agent", received), ("call", encoded)):
            usage[name]["cpuMsPerFrame"] = round(usage[name]["cpuSeconds"] * 1000 / max(1, frames), 2)
        results[key] = {
            "content": "scrolling", "wire": wire, "seconds": round(window.seconds, 1), "latencyMs": percentiles(latencies),
            "systemCpu": window.system, "otherCpu": window.other,
            "statsLatencyMs": peer.get("captureToSentMs"),
            "latencyByMinute": latency_by_minute(timed, window.t0) if window.seconds > 120 else None,
            "latencyStagesMs": latency_stages(call.proc.log(), window.t0, window.t1),
            "processes": usage,
            "frames": {"agentCaptured": agent1.get("captured", 0) - agent0.get("captured", 0),
                       "agentSent": agent1.get("sent", 0) - agent0.get("sent", 0),
                       "callReceived": received, "callEncoded": encoded,
                       "refinements": frames1["refinements"] - frames0["refinements"],
                       "repeats": frames1["repeats"] - frames0["repeats"],
                       "keyframes": frames1["keyframes"] - frames0["keyframes"],
                       "encodedFps": round(encoded / window.seconds, 2),
                       "viewerDecoded": sum(v.get("frames", 0) for v in viewer_report.get("viewers", []))},
            "drops": {"agentSocket": agent1.get("dropped", 0) - agent0.get("dropped", 0),
                      "call": delta(stats1["dropped"], stats0["dropped"], stats1["dropped"].keys()),
                      "peer": {k: peer.get(k) for k in ("lobbyDropped", "sendsDropped", "pacerOverflows", "packetsLost", "nacks",
                                                        "retransmitted", "plis", "keyframeRequests")}},
            "kbps": stats1.get("kbps"), "bitrateKbps": stats1.get("bitrateKbps"), "encodeMs": stats1.get("encodeMs"),
            "agentJpegMs": round(sum(jpeg_ms) / len(jpeg_ms), 2) if jpeg_ms else None,
            "viewer": viewer_report.get("viewers"),
            "rssSamples": window.samples[:: max(1, len(window.samples) // 40)],
            "commands": {"agent": agent_argv, "call": call.argv, "viewer": viewer_argv},
        }
        if soak and early:
            later = [row for row in rss_timeline if row[0] >= early["t"]]
            results["memory"] = {
                "early": early, "end": end,
                "callGrowthMiBPerHour": round(slope([(t, c) for t, c, _ in later]) * 3600, 2) if len(later) > 2 else None,
                "agentGrowthMiBPerHour": round(slope([(t, a) for t, _, a in later]) * 3600, 2) if len(later) > 2 else None,
                "timeline": [{"t": round(t, 1), "call": round(c, 1), "agent": round(a, 1)}
                             for t, c, a in rss_timeline[:: max(1, len(rss_timeline) // 30)]]}
    finally:
        for p in (viewer, agent):
            if p:
                p.stop()
        if call:
            call.proc.stop()
        scene.stop()
        xvfb.stop()


def profile(processes, seconds):
    """perf record (cpu-clock samples at 499 Hz) of each process at once for `seconds`; the top symbols."""
    import shutil
    import subprocess
    if not shutil.which("perf"):
        return {"error": "perf not installed"}
    log("profile: perf record of %s for %d s" % (", ".join(processes), seconds))
    recorders = {}
    for name, proc in processes.items():
        data = WORK.path("perf-%s.data" % name)
        recorders[name] = (data, procs.start("perf", ["perf", "record", "-F", "499", "-o", data, "-p", str(proc.pid), "--",
                                                      "sleep", str(seconds)], log_path=WORK.path("perf-%s.log" % name)))
    out = {}
    for name, (data, recorder) in recorders.items():
        recorder.wait(seconds + 30)
        recorder.stop()
        # Per shared object (the Debian libraries are stripped: libvpx and libturbojpeg have no symbols), then
        # the named symbols of 1 % and more (Swift names demangled).
        by_dso = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "dso"],
                                capture_output=True, text=True).stdout
        by_symbol = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "dso,sym",
                                    "--percent-limit", "0.7"], capture_output=True, text=True).stdout
        by_symbol = subprocess.run(["swift", "demangle", "--simplified", "--compact"], input=by_symbol, capture_output=True,
                                   text=True).stdout or by_symbol
        objects = []
        for line in by_dso.splitlines():
            m = re.match(r"\s*([\d.]+)%\s+(\S+)\s*$", line)
            if m and float(m.group(1)) >= 0.5:
                objects.append({"percent": float(m.group(1)), "dso": m.group(2), "symbol": "(all)"})
        symbols = []
        for line in by_symbol.splitlines():
            m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[[.k]\]\s+(.*)", line)
            if m and not m.group(3).strip().startswith("0x"):
                symbols.append({"percent": float(m.group(1)), "dso": m.group(2), "symbol": m.group(3).strip()[:140]})
        out[name] = objects[:12] + symbols[:15]
    return out


def slope(points):
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    den = sum((p[0] - mx) ** 2 for p in points)
    return sum((p[0] - mx) * (p[1] - my) for p in points) / den if den else 0.0


def xvfb_proc(xvfb):
    """A Proc-like view of the Xvfb for CPU and memory readings."""
    view = procs.Proc.__new__(procs.Proc)
    view.name, view.pid, view.process, view.last_cpu = "xvfb", xvfb.pid, xvfb.process, 0.0
    view.log_path = view.stdout_path = None
    return view


class UDPSink:
    """Receives (and drops) the RTP ffmpeg and GStreamer send, counting bytes."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.bytes = self.packets = self.frames = 0
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while self.running:
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            self.bytes += len(data)
            self.packets += 1
            # RTP (RFC 3550) with the marker bit: a video frame's last packet (RTCP has payload types 200-204).
            if len(data) > 12 and data[0] >> 6 == 2 and data[1] & 0x80 and not 200 <= data[1] <= 204:
                self.frames += 1

    def stop(self):
        self.running = False
        self.thread.join(2)
        self.sock.close()


def ffmpeg_argv(display, seconds, port):
    return ["ffmpeg", "-hide_banner", "-nostats", "-loglevel", "error", "-f", "x11grab", "-framerate", str(FPS),
            "-video_size", "%dx%d" % (WIDTH, HEIGHT), "-i", display, "-t", str(seconds),
            "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "-6",
            "-b:v", "%dk" % BITRATE_KBPS, "-minrate", "%dk" % BITRATE_KBPS, "-maxrate", "%dk" % BITRATE_KBPS,
            "-bufsize", "%dk" % BITRATE_KBPS,
            "-threads", "1", "-qmin", "12", "-qmax", "56", "-g", "100000",
            "-f", "rtp", "rtp://127.0.0.1:%d?pkt_size=1200" % port]


def gstreamer_argv(display, seconds, port):
    return ["gst-launch-1.0", "-q", "ximagesrc", "display-name=" + display, "show-pointer=true",
            "num-buffers=%d" % int(seconds * FPS), "!", "video/x-raw,framerate=%d/1" % FPS, "!", "videoconvert", "!",
            "video/x-raw,format=I420", "!", "vp8enc", "deadline=1", "cpu-used=-6", "end-usage=cbr",
            "target-bitrate=%d" % (BITRATE_KBPS * 1000), "buffer-size=1000", "buffer-initial-size=500",
            "buffer-optimal-size=600", "threads=1", "min-quantizer=12", "max-quantizer=56",
            "keyframe-max-dist=100000", "!", "rtpvp8pay", "mtu=1200", "!", "udpsink", "host=127.0.0.1", "port=%d" % port]


def have_gstreamer():
    import shutil
    import subprocess
    if not shutil.which("gst-launch-1.0"):
        return False
    return all(subprocess.run(["gst-inspect-1.0", "--exists", e]).returncode == 0
               for e in ("ximagesrc", "videoconvert", "vp8enc", "rtpvp8pay", "udpsink"))


def run_ours(xvfb, scene, warm, window_seconds, wire="jpeg"):
    sock = WORK.path("cmp.sock")
    call = Call("cmp-%s" % scene, sock)
    agent = viewers = None
    try:
        agent, agent_argv = start_agent("cmp-%s-%s" % (scene, wire), xvfb.display, sock, wire)
        procs.wait_for(lambda: call.stats()["frames"]["encoded"] > 0, 15)
        viewers_argv = [BENCH, "viewers", "--url", call.whep, "--count", "1", "--seconds", str(warm + window_seconds + 3)]
        viewers = procs.start("viewers", viewers_argv, log_path=WORK.path("cmp-viewers.log"), stdout_path=WORK.path("cmp-viewers.json"))
        if not procs.wait_for(lambda: call.connected(1), 20, 0.1):
            raise RuntimeError("light viewer did not connect: " + viewers.log()[-1000:])
        time.sleep(warm)
        stats0 = call.stats()
        window = Window({"agent": agent, "call": call.proc, "xvfb": xvfb_proc(xvfb), "viewer": viewers})
        window.sleep(window_seconds)
        usage = window.finish()
        stats1 = call.stats()
        peer = (stats1["viewers"]["peers"] or [{}])[0]
        encoded = stats1["frames"]["encoded"] - stats0["frames"]["encoded"]
        bytes_sent = stats1["bytes"] - stats0["bytes"]
        return {"cpuPerSecond": round(usage["agent"]["cpuPerSecond"] + usage["call"]["cpuPerSecond"], 4),
                "agentCpuPerSecond": usage["agent"]["cpuPerSecond"], "callCpuPerSecond": usage["call"]["cpuPerSecond"],
                "xvfbCpuPerSecond": usage["xvfb"]["cpuPerSecond"], "viewerCpuPerSecond": usage["viewer"]["cpuPerSecond"],
                "fps": round(encoded / window.seconds, 2), "kbps": round(bytes_sent * 8 / 1000 / window.seconds, 1),
                "received": stats1["frames"]["received"] - stats0["frames"]["received"],
                "refinements": stats1["frames"]["refinements"] - stats0["frames"]["refinements"],
                "repeats": stats1["frames"]["repeats"] - stats0["frames"]["repeats"],
                "latencyMs": peer.get("captureToSentMs"), "seconds": round(window.seconds, 2),
                "systemCpu": window.system, "otherCpu": window.other}, \
            {"agent" if wire == "jpeg" else "agent-" + wire: agent_argv, "call": call.argv, "viewers": viewers_argv}
    finally:
        for p in (viewers, agent):
            if p:
                p.stop()
        call.proc.stop()


def run_theirs(kind, xvfb, warm, window_seconds):
    sink = UDPSink()
    total = warm + window_seconds + 2
    argv = (ffmpeg_argv if kind == "ffmpeg" else gstreamer_argv)(xvfb.display, total, sink.port)
    proc = procs.start(kind, argv, log_path=WORK.path("cmp-%s.log" % kind))
    try:
        if not procs.wait_for(lambda: sink.packets > 0 or not proc.alive(), 15):
            raise RuntimeError("%s sent nothing: %s" % (kind, proc.log()[-1000:]))
        time.sleep(warm)
        bytes0, frames0 = sink.bytes, sink.frames
        window = Window({kind: proc, "xvfb": xvfb_proc(xvfb)})
        window.sleep(window_seconds)
        usage = window.finish()
        if not proc.alive():
            raise RuntimeError("%s ended early: %s" % (kind, proc.log()[-1000:]))
        return {"cpuPerSecond": usage[kind]["cpuPerSecond"], "xvfbCpuPerSecond": usage["xvfb"]["cpuPerSecond"],
                "kbps": round((sink.bytes - bytes0) * 8 / 1000 / window.seconds, 1), "seconds": round(window.seconds, 2),
                "fps": round((sink.frames - frames0) / window.seconds, 2),
                "systemCpu": window.system, "otherCpu": window.other}, argv
    finally:
        proc.stop()
        sink.stop()


def phase_compare(cfg, results):
    tools = ["ours", "ours-i420", "ours-shm", "ffmpeg"] + (["gstreamer"] if have_gstreamer() else [])
    log("compare: %s, %d round(s) per content, interleaved" % (", ".join(tools), cfg["compare_rounds"]))
    out = {"tools": tools, "bitrateKbps": BITRATE_KBPS, "contents": {}, "commands": {}}
    for scene_name in xscene.SCENES:
        window_seconds = cfg["compare_static_window"] if scene_name == "static" else cfg["compare_window"]
        xvfb = xscene.Xvfb(WIDTH, HEIGHT)
        scene = xscene.Scene(xvfb, scene_name)
        runs = {tool: [] for tool in tools}
        try:
            time.sleep(0.5)
            for round_index in range(cfg["compare_rounds"]):
                order = tools if round_index % 2 == 0 else list(reversed(tools))
                for tool in order:
                    log("compare: %s, %s (round %d)" % (scene_name, tool, round_index + 1))
                    if tool.startswith("ours"):
                        wire = {"ours-i420": "i420", "ours-shm": "shm"}.get(tool, "jpeg")
                        run, commands = run_ours(xvfb, scene_name, cfg["compare_warm"], window_seconds, wire)
                        out["commands"].update(commands)
                    else:
                        run, argv = run_theirs(tool, xvfb, cfg["compare_warm"], window_seconds)
                        out["commands"][tool] = argv
                    run["round"] = round_index + 1
                    runs[tool].append(run)
        finally:
            scene.stop()
            xvfb.stop()
        entry = {"runs": runs}
        for tool in tools:
            values = sorted(r["cpuPerSecond"] for r in runs[tool])
            entry[tool] = {"cpuPerSecond": report.median(values), "min": values[0], "max": values[-1]}
        for tool in (t for t in tools if not t.startswith("ours")):
            theirs = entry[tool]["cpuPerSecond"]
            entry["ratioVs" + tool.capitalize()] = round(entry["ours"]["cpuPerSecond"] / theirs, 4) if theirs else None
            entry["i420RatioVs" + tool.capitalize()] = round(entry["ours-i420"]["cpuPerSecond"] / theirs, 4) if theirs else None
            entry["shmRatioVs" + tool.capitalize()] = round(entry["ours-shm"]["cpuPerSecond"] / theirs, 4) if theirs else None
        out["contents"][scene_name] = entry
    results["compare"] = out


def phase_scale(cfg, results):
    log("scale: agent + call on live 1080p scrolling text with %s light viewers" % cfg["scale_counts"])
    xvfb = xscene.Xvfb(WIDTH, HEIGHT)
    scene = xscene.Scene(xvfb, "scrolling")
    sock = WORK.path("scale.sock")
    call = Call("scale", sock)
    agent = None
    rows = []
    try:
        agent, _ = start_agent("scale", xvfb.display, sock)
        procs.wait_for(lambda: call.stats()["frames"]["encoded"] > 0, 15)
        for count in cfg["scale_counts"]:
            viewers = None
            if count:
                argv = [BENCH, "viewers", "--url", call.whep, "--count", str(count),
                        "--seconds", str(cfg["scale_warm"] + cfg["scale_window"] + 3)]
                viewers = procs.start("viewers", argv, log_path=WORK.path("scale-viewers-%d.log" % count),
                                      stdout_path=WORK.path("scale-viewers-%d.json" % count))
                if not procs.wait_for(lambda: call.connected(count), 40, 0.2):
                    raise RuntimeError("%d light viewers did not all connect: %s" % (count, viewers.log()[-1000:]))
            time.sleep(cfg["scale_warm"])
            stats0 = call.stats()
            watched = {"call": call.proc, "agent": agent}
            if viewers:
                watched["viewers"] = viewers
            window = Window(watched)
            window.sleep(cfg["scale_window"])
            usage = window.finish()
            stats1 = call.stats()
            peers = stats1["viewers"]["peers"]
            encoded = stats1["frames"]["encoded"] - stats0["frames"]["encoded"]
            row = {"viewers": count, "callCpuPerSecond": usage["call"]["cpuPerSecond"],
                   "callCpuMsPerFrame": round(usage["call"]["cpuSeconds"] * 1000 / max(1, encoded), 2),
                   "callRssMiB": usage["call"]["rssMiB"], "callPeakRssMiB": usage["call"]["peakRssMiB"],
                   "viewersCpuPerSecond": usage.get("viewers", {}).get("cpuPerSecond"),
                   "agentCpuPerSecond": usage["agent"]["cpuPerSecond"],
                   "fps": round(encoded / window.seconds, 2), "kbps": stats1.get("kbps"),
                   "connected": stats1["viewers"]["connected"], "systemCpu": window.system, "otherCpu": window.other,
                   "latencyP50Ms": report.median([p["captureToSentMs"]["p50"] for p in peers if p["captureToSentMs"]["p50"] is not None]),
                   "latencyP99MaxMs": max([p["captureToSentMs"]["p99"] or 0 for p in peers], default=None),
                   "sendsDropped": sum(p["sendsDropped"] for p in peers), "pacerOverflows": sum(p["pacerOverflows"] for p in peers)}
            if viewers:
                viewers.wait(cfg["scale_warm"] + cfg["scale_window"] + 30)
                try:
                    reported = json.loads(viewers.stdout().strip().splitlines()[-1])
                    row["viewersReport"] = {"connected": reported["connected"],
                                            "mediaPacketsMin": min(v["mediaPackets"] for v in reported["viewers"])}
                except Exception:
                    row["viewersReport"] = None
                viewers.stop()
                procs.wait_for(lambda: call.stats()["viewers"]["count"] == 0, 10, 0.2)
            rows.append(row)
            log("scale: %d viewers: call %.1f%% of a core, RSS %.1f MiB" % (count, row["callCpuPerSecond"] * 100, row["callRssMiB"]))
    finally:
        if agent:
            agent.stop()
        call.proc.stop()
        scene.stop()
        xvfb.stop()
    points = [(r["viewers"], r["callCpuPerSecond"]) for r in rows]
    results["scale"] = {"rows": rows, "source": "live scrolling text (agent on Xvfb)",
                        "perViewerCoreFraction": round(slope(points), 5),
                        "perViewerRssMiB": round(slope([(r["viewers"], r["callRssMiB"]) for r in rows]), 3),
                        "command": call.argv}


def phase_variants(cfg, results):
    """Not part of the default run: capture → RTP-sent latency of the call with other options, on the same
    content (1080p scrolling text, one light viewer), to see what the latency is made of."""
    # (label, call options, agent wire format)
    variants = [("default", [], "jpeg"), ("--encoder-threads 2", ["--encoder-threads", "2"], "jpeg"),
                ("--cpu-used -10", ["--cpu-used", "-10"], "jpeg"),
                ("agent --format i420", [], "i420"),
                ("agent --format i420, --encoder-threads 2", ["--encoder-threads", "2"], "i420")]
    xvfb = xscene.Xvfb(WIDTH, HEIGHT)
    scene = xscene.Scene(xvfb, "scrolling")
    rows = []
    try:
        for round_index in range(2):
            for label, extra, wire in variants:
                log("variants: %s (round %d)" % (label, round_index + 1))
                sock = WORK.path("var.sock")
                call = Call("var", sock, extra=extra, debug=True)
                agent = viewers = None
                try:
                    agent, _ = start_agent("var", xvfb.display, sock, wire)
                    procs.wait_for(lambda: call.stats()["frames"]["encoded"] > 0, 15)
                    viewers = procs.start("viewers", [BENCH, "viewers", "--url", call.whep, "--seconds", "20"],
                                          log_path=WORK.path("var-viewers.log"))
                    procs.wait_for(lambda: call.connected(1), 20, 0.1)
                    time.sleep(3)
                    stats0 = call.stats()
                    window = Window({"agent": agent, "call": call.proc})
                    window.sleep(10)
                    usage = window.finish()
                    stats1 = call.stats()
                    latency = percentiles(frame_sent_latencies(call.proc.log(), window.t0, window.t1))
                    rows.append({"variant": label, "round": round_index + 1, "latencyMs": latency,
                                 "fps": round((stats1["frames"]["encoded"] - stats0["frames"]["encoded"]) / window.seconds, 2),
                                 "encodeMs": stats1["encodeMs"], "agentCpuPerSecond": usage["agent"]["cpuPerSecond"],
                                 "callCpuPerSecond": usage["call"]["cpuPerSecond"], "otherCpu": window.other,
                                 "stale": stats1["dropped"]["stale"] - stats0["dropped"]["stale"]})
                finally:
                    for p in (viewers, agent):
                        if p:
                            p.stop()
                    call.proc.stop()
    finally:
        scene.stop()
        xvfb.stop()
    results["variants"] = rows


def phase_g2g(mode, results, command_line):
    """Glass to glass (g2g.py); a full-mode run is kept (last-g2g-run.json) and its section replaces the one in
    BENCHMARKS.md."""
    import types
    context = types.SimpleNamespace(work=WORK, Call=Call, start_agent=start_agent, log=log)
    out = g2g.phase(mode, results, context)
    out["command"] = command_line
    if mode == "full" and g2g.CONFIGS == g2g.ALL_CONFIGS and g2g.FRAME_RATES == [30, 60]:
        g2g_report.save(out)
        g2g_report.splice(os.path.join(REPO, "BENCHMARKS.md"), g2g_report.markdown_lines(out, command_line))
        log("g2g: wrote %s and its section of BENCHMARKS.md" % g2g_report.LAST_RUN)


def phase_network(results):
    # Debian's python3 has matplotlib (tools/setup); the interpreter running this may be another one.
    png = os.path.join(REPO, "BENCHMARKS-network.png")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "network.py")
    log("network: GCC step profile in the simulator, plot to %s" % png)
    done = subprocess.run(["/usr/bin/python3", script, BENCH, png], capture_output=True, text=True, timeout=600, check=True)
    results["network"] = json.loads(done.stdout)


# MARK: - Main

def phase_portal(results):
    """Portal (Wayland, PipeWire) capture against X11 MIT-SHM capture at 1920x1080, 30 fps (tools/bench.d/portal.py:
    agent CPU, capture -> received on the socket, screen change -> wire)."""
    import subprocess
    out = WORK.path("portal.json")
    log("portal: portal vs X11 capture (tools/bench.d/portal.py)")
    run = subprocess.run([sys.executable, "-B", os.path.join(REPO, "tools", "bench.d", "portal.py"), "--json", out],
                         capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        raise RuntimeError("portal.py failed: " + run.stderr[-2000:])
    with open(out) as f:
        results["portal"] = json.load(f)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", dest="json_path")
    parser.add_argument("--markdown", help="write BENCHMARKS.md-style report to this file")
    parser.add_argument("--phases", default="micro,e2e,e2e-local,compare,scale,network")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs, dumps)")
    parser.add_argument("--command-line", default="tools/bench")
    args = parser.parse_args()
    mode = "quick" if args.quick else "full"
    cfg = MODES[mode]
    phases = args.phases.split(",")

    global WORK
    WORK = Work(args.keep)
    started = time.monotonic()

    def on_signal(number, _frame):
        raise KeyboardInterrupt("signal %d" % number)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGALRM, on_signal)
    signal.alarm(cfg["limit"] + (g2g.time_limit(mode) if "g2g" in phases else 0))

    results = {"mode": mode, "command": args.command_line, "started": datetime.datetime.now().isoformat(timespec="seconds"),
               "machine": procs.machine(), "loadBefore": procs.load_average(), "phases": phases,
               "settings": {k: v for k, v in cfg.items()}, "work": WORK.dir, "errors": []}
    log("%s run, work folder %s, load %s" % (mode, WORK.dir, results["loadBefore"]))
    dumps = {}
    try:
        for phase in phases:
            t = time.monotonic()
            try:
                if phase == "micro":
                    dumps = phase_micro(cfg, results)
                elif phase == "e2e":
                    phase_e2e(cfg, results)
                elif phase == "e2e-local":
                    phase_e2e(cfg, results, wire="i420")
                elif phase == "e2e-shm":
                    phase_e2e(cfg, results, wire="shm")
                elif phase == "g2g":
                    phase_g2g(mode, results, args.command_line)
                elif phase == "compare":
                    phase_compare(cfg, results)
                elif phase == "variants":
                    phase_variants(cfg, results)
                elif phase == "scale":
                    phase_scale(cfg, results)
                elif phase == "network":
                    phase_network(results)
                elif phase == "portal":
                    phase_portal(results)
            except KeyboardInterrupt:
                raise
            except Exception as error:
                log("phase %s failed: %s" % (phase, error))
                results["errors"].append({"phase": phase, "error": str(error)[-3000:]})
            finally:
                procs.stop_all()
            results.setdefault("phaseSeconds", {})[phase] = round(time.monotonic() - t, 1)
    except KeyboardInterrupt as stop:
        results["errors"].append({"phase": "run", "error": "interrupted: %s" % stop})
    finally:
        procs.stop_all()
    results["loadAfter"] = procs.load_average()
    results["durationSeconds"] = round(time.monotonic() - started, 1)
    results["targets"] = report.targets(results)
    print(report.table(results))
    if args.json_path:
        with open(args.json_path, "w") as f:
            json.dump(results, f, indent=1)
        log("wrote %s" % args.json_path)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(report.markdown(results))
        log("wrote %s" % args.markdown)
    if not args.keep:
        import shutil
        shutil.rmtree(WORK.dir, ignore_errors=True)
    return 1 if results["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
