"""The glass-to-glass phase of tools/bench (`--phases g2g`, issue 15): the time from a change painted on the
X screen to the moment headless Chromium shows it, for our viewer (screencast-agent + screencast-call, the
call's viewer page) on each wire and for Chrome's own screen share in the same run.

The screen (1920x1080 Xvfb): an xterm running `top -d 0.5` on the left, and the painter (painter.py) at
PAINTER_X, PAINTER_Y showing CLOCK_REALTIME in ms as glasscode's cells, repainted every 4 ms, so every
captured frame differs from the one before (the agent never skips a frame as unchanged).

Configurations, each at 30 and 60 fps, interleaved (each round visits every configuration; odd rounds in
reverse order), `runs` rounds:
  ours-jpeg  agent --format jpeg (the default wire) + call --max-fps N, Chromium on the viewer page
  ours-shm   agent --format shm (the picture in shared memory, the local fast path)
  ours-i420  agent --format i420 (raw planes over the socket)
  chrome     Chromium's getDisplayMedia of the same screen → VP8 → a second peer connection in the same
             page (g2g_anchor.html): Chrome's own screen share, the anchor

Each run reads every presented frame (requestVideoFrameCallback, g2g_reader.js) for `window` seconds after
`warm` seconds of playing. Per frame: g2g = expectedDisplayTime - painted; painted → received =
receiveTime - painted; received → shown = expectedDisplayTime - receiveTime. Painted → captured:
for ours the agent's capture time of the frame (joined by RTP timestamp with the call's debug `frame sent`
line, g2g_split.py, which also gives captured → sent and sent → received); for Chrome, Chromium's own
captureTime estimate. A frame whose code is refused (glasscode.Unreadable) counts as invalid by reason; a
run with fewer than min_valid (MODES) valid frames, or more than MAX_INVALID_SHARE of its frames invalid,
is reported as such and left out of the percentiles.
"""

import json
import os
import subprocess
import time

import g2g_cpu
import g2g_split
import glasscode
import procs

HERE = os.path.dirname(os.path.abspath(__file__))
SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's: python3-selenium and python3-xlib
WIDTH, HEIGHT = 1920, 1080
PAINTER_X, PAINTER_Y = 1600, 80
PAINT_INTERVAL_MS = 4
ALL_CONFIGS = ["ours-jpeg", "ours-shm", "ours-i420", "chrome"]
WIRES = {"ours-jpeg": "jpeg", "ours-shm": "shm", "ours-i420": "i420"}
# A subset for quick looks while working (tools/bench --help): G2G_CONFIGS=ours-shm,chrome G2G_FPS=60.
CONFIGS = [c for c in os.environ.get("G2G_CONFIGS", ",".join(ALL_CONFIGS)).split(",") if c in ALL_CONFIGS] or ALL_CONFIGS
FRAME_RATES = [int(f) for f in os.environ.get("G2G_FPS", "30,60").split(",") if f.strip().isdigit()] or [30, 60]
# min_valid: the fewest valid frames a usable run has, by mode (a quick run has a short window).
MODES = {"quick": dict(runs=1, warm=3, window=5, min_valid=10), "full": dict(runs=3, warm=5, window=10, min_valid=30)}
if os.environ.get("G2G_WARM", "").isdigit():  # seconds of playing before the window (tools/bench --help)
    for _mode in MODES.values():
        _mode["warm"] = int(os.environ["G2G_WARM"])
MAX_INVALID_SHARE = 0.2
# Per-frame latencies kept (ms): g2g = shown - painted; the rest split it (g2g_split.py for ours).
STAGES = ["g2g", "paintedToReceived", "receivedToShown", "paintedToCaptured", "capturedToSent", "sentToReceived",
          "capturedToReceived"]
# Chromium gathers no ICE candidate in a namespace with only loopback, so two peers in one page cannot meet
# (a remote viewer of ours is found peer-reflexive). For the anchor, a veth pair inside the bench's own
# namespace carries a private address, and a default route through it (to no one: the other end has no
# address) makes Chromium gather it; the route is there only while the anchor runs.
ANCHOR_LINK, ANCHOR_PEER, ANCHOR_ADDRESS, ANCHOR_GATEWAY = "g2g0", "g2g1", "10.200.0.1/24", "10.200.0.2"


def time_limit(mode):
    """Seconds the phase may take (for the bench's alarm): every run's warm-up, window and a 25 s margin."""
    cfg = MODES[mode]
    return cfg["runs"] * len(CONFIGS) * len(FRAME_RATES) * (cfg["warm"] + cfg["window"] + 25)


def layout():
    """Where the reader finds the code on the screen (g2g_reader.js, g2g_browser.py --layout)."""
    return {"screenWidth": WIDTH, "screenHeight": HEIGHT, "codeX": PAINTER_X + glasscode.QUIET,
            "codeY": PAINTER_Y + glasscode.QUIET, "cell": glasscode.CELL, "columns": glasscode.COLUMNS,
            "rows": glasscode.ROWS}


def _ip(*args):
    subprocess.run(["ip"] + list(args), check=True, capture_output=True, text=True)


def anchor_network():
    """The veth pair for the anchor (see ANCHOR_LINK). Refuses outside a namespace of only loopback: it
    would add an interface and a default route to a real machine."""
    # `ip link` speaks for this namespace (/sys/class/net is the mount's, not the namespace's).
    listing = subprocess.run(["ip", "-o", "link", "show"], check=True, capture_output=True, text=True).stdout
    links = sorted(line.split(":")[1].strip().split("@")[0] for line in listing.splitlines() if ":" in line)
    if links == ["lo"]:
        _ip("link", "add", ANCHOR_LINK, "type", "veth", "peer", "name", ANCHOR_PEER)
        _ip("addr", "add", ANCHOR_ADDRESS, "dev", ANCHOR_LINK)
        _ip("link", "set", ANCHOR_LINK, "up")
        _ip("link", "set", ANCHOR_PEER, "up")
    elif links != sorted(["lo", ANCHOR_LINK, ANCHOR_PEER]):
        raise RuntimeError("g2g: Chrome's anchor needs the loopback-only namespace of tools/bench (interfaces here: %s)"
                           % ", ".join(links))


def anchor_route(on):
    if on:
        _ip("route", "replace", "default", "via", ANCHOR_GATEWAY, "dev", ANCHOR_LINK)
    else:
        subprocess.run(["ip", "route", "del", "default"], capture_output=True)


class Screen:
    """The Xvfb with `top` in an xterm and the painter, until stop()."""

    def __init__(self, xscene, work):
        self.xvfb = xscene.Xvfb(WIDTH, HEIGHT)
        env = self.xvfb.env
        subprocess.run(["xdotool", "mousemove", "40", str(HEIGHT - 40)], env=env, check=False)
        self.top = procs.start("xterm", ["xterm", "-geometry", "160x60+0+0", "-fa", "", "-fn", "9x15", "-bg", "#fdf6e3",
                                         "-fg", "#222222", "-e", "top", "-d", "0.5"], env=env,
                               log_path=work.path("g2g-xterm.log"))
        self.painter = procs.start("painter", [SYSTEM_PYTHON, os.path.join(HERE, "painter.py"), "--display", self.xvfb.display,
                                               "--x", str(PAINTER_X), "--y", str(PAINTER_Y),
                                               "--interval-ms", str(PAINT_INTERVAL_MS)],
                                   log_path=work.path("g2g-painter.log"), stdout_path=work.path("g2g-painter.json"))
        time.sleep(1.0)
        if not self.painter.alive():
            raise RuntimeError("the painter ended: " + self.painter.log()[-1000:])

    def stop(self):
        report = None
        if self.painter.alive():
            self.painter.stop()
            try:
                report = json.loads(self.painter.stdout().strip().splitlines()[-1])
            except (ValueError, IndexError):
                report = None
        self.top.stop()
        self.xvfb.stop()
        return report


def read_browser(work, name, display, cfg, url=None, fps=None, watched=()):
    """One g2g_browser.py reading (the viewer page at `url`, or the anchor at `fps`); its JSON result, with
    "cpu": cores used over the reader's window by the browser (its whole process tree) and by each of
    `watched` (procs.Proc: the agent and the call)."""
    profile = work.path("g2g-profile-" + name)
    os.makedirs(profile, exist_ok=True)
    env = dict(os.environ, HOME=profile, TMPDIR=profile, DISPLAY=display)
    argv = [SYSTEM_PYTHON, os.path.join(HERE, "g2g_browser.py"), "--profile", profile, "--layout", json.dumps(layout()),
            "--warm", str(cfg["warm"]), "--window", str(cfg["window"])]
    argv += ["--url", url] if url else ["--anchor-fps", str(fps)]
    browser = procs.start("g2g-browser", argv, env=env, log_path=work.path("g2g-%s-browser.log" % name),
                          stdout_path=work.path("g2g-%s-browser.json" % name))
    limit = cfg["warm"] + cfg["window"] + 90
    cpu = None
    if procs.wait_for(lambda: "g2g: window start" in browser.log() or not browser.alive(), limit, 0.1) and browser.alive():
        start = time.monotonic(), g2g_cpu.tree(browser.pid), {p.name: p.cpu() for p in watched}
        if procs.wait_for(lambda: "g2g: window end" in browser.log() or not browser.alive(), limit, 0.1) and browser.alive():
            seconds = time.monotonic() - start[0]
            cpu = {"browser": round(g2g_cpu.used(start[1], g2g_cpu.tree(browser.pid)) / seconds, 3)}
            cpu.update({p.name: round((p.cpu() - start[2][p.name]) / seconds, 3) for p in watched})
    if browser.wait(limit) is None:
        browser.stop()
        return {"error": "the browser reading took over %d s" % limit}
    browser.stop()
    try:
        reading = json.loads(browser.stdout().strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": "no result from g2g_browser.py: " + browser.log()[-1500:]}
    reading["cpu"] = cpu
    return reading


def run_ours(ctx, screen, config, fps, cfg, name):
    sock = ctx.work.path(name + ".sock")
    call = ctx.Call(name, sock, extra=["--max-fps", str(fps)], debug=True)  # debug: its `frame sent` lines
    agent = None
    try:
        agent, agent_argv = ctx.start_agent(name, screen.xvfb.display, sock, WIRES[config], fps=fps)
        if not procs.wait_for(lambda: call.stats()["frames"]["encoded"] > 0, 15):
            raise RuntimeError("no frame encoded:\n" + agent.log()[-1500:])
        before = time.time() * 1000 - time.monotonic() * 1000
        reading = read_browser(ctx.work, name, screen.xvfb.display, cfg, url="http://127.0.0.1:%d/" % call.port,
                               watched=(agent, call.proc))
        reading["realtimeMinusMonotonicMs"] = (before + time.time() * 1000 - time.monotonic() * 1000) / 2
        reading["sentFrames"] = g2g_split.sent_frames(call.proc.log())
        reading["commands"] = {"agent": agent_argv, "call": call.argv}
        try:  # what the call did over the whole run (frames encoded, dropped as stale, encode ms)
            stats = call.stats()
            reading["callStats"] = {k: stats.get(k) for k in ("frames", "dropped", "encodeMs", "kbps", "bitrateKbps")}
        except Exception as failure:
            reading["callStats"] = {"error": str(failure)}
        return reading
    finally:
        if agent:
            agent.stop()
        call.proc.stop()


def run_chrome(ctx, screen, fps, cfg, name):
    anchor_route(True)
    try:
        return read_browser(ctx.work, name, screen.xvfb.display, cfg, fps=fps)
    finally:
        anchor_route(False)


def analyse(reading, min_valid):
    """Per-frame latencies (ms) and the validity counts of one reading (see the module's docstring)."""
    out = dict({key: [] for key in STAGES}, frames=0, valid=0, invalid={}, error=reading.get("error"))
    origin = reading.get("timeOrigin")
    samples = reading.get("samples") or []
    joined, out["joinedShare"] = g2g_split.join([s[7] for s in samples], reading.get("sentFrames") or [],
                                                reading.get("realtimeMinusMonotonicMs") or 0)
    for sample in samples:
        cells, _at, _presented, shown, received, captured = sample[:6]
        out["frames"] += 1
        shown_wall = origin + shown
        try:
            painted = glasscode.decode(glasscode.from_hex(cells), shown_wall)
        except glasscode.Unreadable as refused:
            out["invalid"][refused.reason] = out["invalid"].get(refused.reason, 0) + 1
            continue
        out["valid"] += 1
        out["g2g"].append(shown_wall - painted)
        if received is not None:
            out["paintedToReceived"].append(origin + received - painted)
            out["receivedToShown"].append(shown - received)
        if captured is not None:  # Chromium's estimate of the sender's capture (Chrome's anchor only)
            out["paintedToCaptured"].append(origin + captured - painted)
            if received is not None:
                out["capturedToReceived"].append(received - captured)
        if sample[7] in joined:  # ours: the call's own capture and send times of this frame
            capture_wall, sent_wall = joined[sample[7]]
            out["paintedToCaptured"].append(capture_wall - painted)
            out["capturedToSent"].append(sent_wall - capture_wall)
            if received is not None:
                out["sentToReceived"].append(origin + received - sent_wall)
                out["capturedToReceived"].append(origin + received - capture_wall)
    stats = reading.get("stats") or {}
    emitted = stats.get("jitterBufferEmittedCount")
    out["jitterBufferMs"] = round(1000 * stats["jitterBufferDelay"] / emitted, 2) if emitted else None
    out["kbps"] = round(stats["bytesReceived"] * 8 / 1000 / reading["windowSeconds"], 1) if \
        stats.get("bytesReceived") and reading.get("windowSeconds") else None
    out["framesDecoded"] = stats.get("framesDecoded")
    out["framesDropped"] = stats.get("framesDropped")
    out["clockSkewMs"] = reading.get("clockSkewMs")
    out["path"] = reading.get("path")
    out["usable"] = out["error"] is None and out["valid"] >= min_valid and \
        (out["frames"] - out["valid"]) <= MAX_INVALID_SHARE * out["frames"]
    return out


def percentiles(values):
    if not values:
        return None
    ordered = sorted(values)

    def at(p):
        return round(procs.nearest_rank(ordered, p), 1)
    return {"count": len(ordered), "p50": at(0.5), "p90": at(0.9), "p99": at(0.99)}


def summarise(runs):
    """Per configuration and frame rate: the pooled percentiles of its usable runs, its validity counts,
    and each row's ratio (p50 g2g, p50 painted → received) to Chrome's at the same frame rate."""
    rows = []
    for fps in FRAME_RATES:
        for config in CONFIGS:
            mine = [r for r in runs if r["config"] == config and r["fps"] == fps]
            if not mine:
                continue
            usable = [r for r in mine if r["analysis"]["usable"]]
            row = {"config": config, "fps": fps, "runs": len(mine), "usableRuns": len(usable),
                   "frames": sum(r["analysis"]["frames"] for r in mine), "valid": sum(r["analysis"]["valid"] for r in mine),
                   "invalid": {}, "errors": [r["analysis"]["error"] for r in mine if r["analysis"]["error"]],
                   "loadAverage": [r["load"][0] for r in mine]}
            for r in mine:
                for reason, count in r["analysis"]["invalid"].items():
                    row["invalid"][reason] = row["invalid"].get(reason, 0) + count
            for key in STAGES:
                row[key] = percentiles(sum((r["analysis"][key] for r in usable), []))
            for key in ("jitterBufferMs", "kbps"):
                values = sorted(r["analysis"][key] for r in usable if r["analysis"][key] is not None)
                row[key] = values[len(values) // 2] if values else None
            cpus = [r["cpu"] for r in usable if r.get("cpu")]
            row["cpu"] = {k: sorted(c.get(k, 0) for c in cpus)[len(cpus) // 2] for k in ("agent", "call", "browser")} if cpus else None
            row["runP50s"] = [(percentiles(r["analysis"]["g2g"]) or {}).get("p50") for r in usable]
            rows.append(row)
    for row in rows:
        chrome = next((r for r in rows if r["config"] == "chrome" and r["fps"] == row["fps"]), None)
        for key in ("g2g", "paintedToReceived"):
            ours, theirs = row.get(key), chrome and chrome.get(key)
            row[key + "Ratio"] = round(ours["p50"] / theirs["p50"], 2) if ours and theirs and theirs["p50"] else None
    return rows


def phase(cfg_name, results, ctx):
    """Runs the phase (ctx: work, Call, start_agent, xscene from bench.py); results["g2g"]."""
    import xscene
    cfg = MODES[cfg_name]
    anchor_network()
    anchor_route(False)
    out = {"settings": dict(cfg, paintIntervalMs=PAINT_INTERVAL_MS, minValidFrames=cfg["min_valid"],
                            maxInvalidShare=MAX_INVALID_SHARE, size="%dx%d" % (WIDTH, HEIGHT),
                            niceness=os.nice(0)),
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "loadBefore": procs.load_average(), "runs": []}
    screen = Screen(xscene, ctx.work)
    try:
        for round_index in range(cfg["runs"]):
            order = [(c, f) for f in FRAME_RATES for c in CONFIGS]
            if round_index % 2:
                order.reverse()
            for config, fps in order:
                name = "g2g-%s-%d-r%d" % (config, fps, round_index + 1)
                ctx.log("g2g: %s at %d fps (round %d of %d)" % (config, fps, round_index + 1, cfg["runs"]))
                load = procs.load_average()
                try:
                    if config == "chrome":
                        reading = run_chrome(ctx, screen, fps, cfg, name)
                    else:
                        reading = run_ours(ctx, screen, config, fps, cfg, name)
                except Exception as failure:
                    reading = {"error": str(failure)[-1500:]}
                reading["windowSeconds"] = cfg["window"]
                analysis = analyse(reading, cfg["min_valid"])
                out["runs"].append({"config": config, "fps": fps, "round": round_index + 1, "load": load,
                                    "analysis": {k: v for k, v in analysis.items()},
                                    "anchorSettings": reading.get("anchorSettings"), "callStats": reading.get("callStats"),
                                    "cpu": reading.get("cpu"),
                                    "commands": reading.get("commands")})
                ctx.log("g2g: %s %d fps: %d frames, %d valid, p50 %s ms%s" % (
                    config, fps, analysis["frames"], analysis["valid"], (percentiles(analysis["g2g"]) or {}).get("p50"),
                    "" if not analysis["error"] else ", error: " + analysis["error"][:200]))
    finally:
        out["painter"] = screen.stop()
    out["loadAfter"] = procs.load_average()
    out["rows"] = summarise(out["runs"])
    for run in out["runs"]:  # keep the JSON small: per-frame lists only as percentiles
        a = run["analysis"]
        for key in STAGES:
            a[key] = percentiles(a[key])
    results["g2g"] = out
    return out
