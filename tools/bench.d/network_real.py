#!/usr/bin/python3
"""Our sender against Chromium's own sender on the same real bottleneck step profile (issue 12).

  tools/bench.d/network_real.py --out DIR [--step-seconds 20] [--legs ours,chrome] [--bin DIR]

Run as root (tested so). The script re-runs itself inside a network namespace of its own with only loopback
up (`unshare --net`; not root: `unshare --user --map-root-user --net`, untested), so no packet leaves the
machine. There it starts a private 1280x720 Xvfb with two still xterms and a 90x28-cell xterm (810x420 px)
scrolling one text line every 33 ms (tools/bench.d/xscene.py's clients), and runs two legs one after the other
on the same profile (about 2 min 10 s in all):

  ours    screencast-agent (--fps 30) on that display → screencast-call from --bin (.build/debug) (--ice-address 127.0.0.1
          --ice-ports 40960-41023, defaults otherwise) → one headless Chromium on the call's viewer page. The
          bottleneck takes UDP from the call's ICE ports (40960-41023): media, RTCP, STUN. Estimate = the call's
          GCC target for that peer (/stats viewers.peers[0].congestion.targetKbps; acknowledgedKbps kept too).
  chrome  Chromium's own screen share: tools/bench.d/g2g_anchor.html (getDisplayMedia of the same display →
          RTCPeerConnection PC1, sendonly VP8 → PC2 in the same page; Chromium's defaults otherwise). Chromium
          gathers no candidate with loopback only, so, as tools/bench's g2g phase does, a veth pair with
          10.200.0.1/24 and a default route into it exist in the namespace during this leg (packets between
          the two peers still go over `lo`). The bottleneck takes UDP from PC1's selected candidate pair's local
          port only (read from getStats once connected). Estimate = PC1's candidate-pair
          availableOutgoingBitrate (Chromium's GCC target).

In both legs the receiver's feedback goes unshaped. The bottleneck is an HTB class with a TBF under it on `lo`
(burst 15kb, latency 100ms, as Tests/EndToEndTests/LoopbackBottleneck.swift), steered by a u32 filter. Until the
receiver decodes its first frame nothing is shaped; at that moment (t = 0) the filter goes in at 1 Mbit/s,
at t = 20 s the link becomes 300 kbit/s, at t = 40 s 3 Mbit/s, and the leg ends at t = 60 s (--step-seconds
scales this). Every 0.5 s a row is taken.

Written into --out:
  network-real.json  {"profile", "machine" (cores, load average), "build" (the call binary's time, git HEAD),
                     "legs": {"ours"|"chrome":
                     {"rows": [{"t" s since the first decoded frame, "capacityKbps", "estimateKbps",
                     "acknowledgedKbps" (ours), "detail" (ours: /stats' peer, bitrate, frames, rate and dropped objects, the encoder's bytes and target), "sentKbps" (chrome: PC1 outbound-rtp, payload + headers),
                     "receivedKbps" (the receiver's inbound-rtp video, payload + headers), "pairReceivedKbps"
                     (everything on the receiver's candidate pair: padding, RTX, RTCP too), "fps", "framesDecoded",
                     "framesEncoded" (ours: the call's encoder; chrome: PC1's outbound-rtp), "captureFps" (chrome:
                     media-source), "width", "limitation" (chrome: qualityLimitationReason)}], "steps":
                     adaptation seconds per step by tools/bench.d/network.py's rule (down: until estimate <= new capacity; up: until
                     estimate >= 70 % of it; null: never), "phases": per capacity, over its last half: estimate
                     min/median, received median, decoded and encoded fps from the counters}, "note", "busyCores",
                     "error"}}; every rate in kbit/s, every time in seconds. Chromium's getStats leaves
                     availableOutgoingBitrate out of some snapshots: those rows have estimateKbps null.
  network-real.png   capacity, both estimates and both received rates (kbit/s) against t, and both fps.
  *.log              the call's, the agent's and chromedriver's output.
Prints one summary line per leg. Exits 1 when a leg failed (its "error" says why; the other leg still runs).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import g2g  # noqa: E402  (the veth pair and route the anchor page needs)
import g2g_browser  # noqa: E402  (serves this folder; the flags getDisplayMedia needs)
import network  # noqa: E402  (the adaptation rule)
import procs  # noqa: E402
import xscene  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402

WIDTH, HEIGHT, FPS = 1280, 720, 30
CALL_PORTS = (40960, 41023)  # --ice-ports; the filter matches sport 40960/0xffc0
HTTP = "127.0.0.1:8080"  # the namespace is ours: nothing else listens there
STEPS = [("1mbit", 1000), ("300kbit", 300), ("3mbit", 3000)]
BURST, LATENCY = "15kb", "100ms"
SCROLLER_COLUMNS, SCROLLER_ROWS = 90, 28  # 9x15 cells: 810x420 px

# Receiver (and sender, for chrome) counters from getStats; arguments[0]/[1] are expressions for the peers.
STATS_JS = """
const done = arguments[arguments.length - 1];
const read = async (pc) => {
  if (!pc) return null;
  const report = await pc.getStats(), out = {};
  let pair = null;
  report.forEach((s) => { if (s.type === "transport" && s.selectedCandidatePairId) pair = report.get(s.selectedCandidatePairId); });
  report.forEach((s) => {
    if (s.type === "inbound-rtp" && s.kind === "video")
      Object.assign(out, { t: s.timestamp, rxBytes: s.bytesReceived + (s.headerBytesReceived || 0),
        framesDecoded: s.framesDecoded || 0, fps: s.framesPerSecond || 0, width: s.frameWidth || null });
    if (s.type === "outbound-rtp" && s.kind === "video")
      Object.assign(out, { t: s.timestamp, txBytes: s.bytesSent + (s.headerBytesSent || 0),
        width: s.frameWidth || null, limitation: s.qualityLimitationReason || null, framesEncoded: s.framesEncoded || 0 });
    if (s.type === "media-source" && s.kind === "video") out.captureFps = s.framesPerSecond ?? null;
  });
  if (pair) {
    const local = report.get(pair.localCandidateId);
    Object.assign(out, { pairRxBytes: pair.bytesReceived, available: pair.availableOutgoingBitrate ?? null,
      localPort: local ? local.port : null, localAddress: local ? local.address : null });
  }
  return out;
};
Promise.all([read(%s), read(%s)]).then(done, (e) => done([{ error: String(e) }, null]));
"""
PEERS = {"ours": ("null", "window.screencastViewer && window.screencastViewer.pc"),
         "chrome": ("window.anchor.sender", "window.anchor.receiver")}


def tc(words, check=True):
    result = subprocess.run(["tc"] + words.split(), capture_output=True, text=True)
    if check and result.returncode != 0:
        raise RuntimeError("tc %s: %s" % (words, result.stderr.strip()))


def bottleneck(rate):
    """The root HTB on lo: class 1:10 (rate, TBF under it) for what a filter steers there, 1:20 for the rest."""
    tc("qdisc del dev lo root", check=False)
    tc("qdisc add dev lo root handle 1: htb default 20")
    tc("class add dev lo parent 1: classid 1:10 htb rate %s ceil %s" % (rate, rate))
    tc("class add dev lo parent 1: classid 1:20 htb rate 10gbit")
    tc("qdisc add dev lo parent 1:10 handle 10: tbf rate %s burst %s latency %s" % (rate, BURST, LATENCY))


def change(rate):
    tc("class change dev lo parent 1: classid 1:10 htb rate %s ceil %s" % (rate, rate))
    tc("qdisc change dev lo parent 1:10 handle 10: tbf rate %s burst %s latency %s" % (rate, BURST, LATENCY))


def browser(profile, extra_flags, log_path):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/lib/chromium/chromium"
    for flag in g2g_browser.FLAGS + extra_flags + ["--user-data-dir=" + profile]:
        options.add_argument(flag)
    env = dict(os.environ, HOME=profile, TMPDIR=profile)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver", log_path=log_path, env=env), options=options)
    driver.set_script_timeout(10)
    return driver


def kbps(now, before, key):
    if not now or not before or now.get(key) is None or before.get(key) is None or now["t"] <= before["t"]:
        return None
    return round((now[key] - before[key]) * 8 / (now["t"] - before["t"]), 1)  # bytes per ms × 8 = kbit/s


def profile_run(leg, driver, shape, our_target, step_seconds):
    """Waits for the first decoded frame, then runs the profile, a row every 0.5 s; returns the rows."""
    script = STATS_JS % PEERS[leg]
    deadline = time.monotonic() + 30
    while True:
        sender, receiver = driver.execute_async_script(script)
        if receiver and receiver.get("framesDecoded", 0) > 0:
            break
        if time.monotonic() > deadline:
            raise RuntimeError("no frame decoded within 30 s of the page loading (%r, %r)" % (sender, receiver))
        time.sleep(0.1)
    t0 = time.monotonic()
    shape(sender)  # the filter, at 1 Mbit/s from here
    rows, previous, stage, tick = [], (None, None), 0, 0
    while tick * 0.5 <= 3 * step_seconds:
        time.sleep(max(0.0, t0 + tick * 0.5 - time.monotonic()))
        t = time.monotonic() - t0
        while stage + 1 < len(STEPS) and t >= (stage + 1) * step_seconds:
            stage += 1
            change(STEPS[stage][0])
        sender, receiver = driver.execute_async_script(script)
        row = {"t": round(t, 2), "capacityKbps": STEPS[stage][1], "receivedKbps": kbps(receiver, previous[1], "rxBytes"),
               "pairReceivedKbps": kbps(receiver, previous[1], "pairRxBytes"),
               "fps": (receiver or {}).get("fps"), "framesDecoded": (receiver or {}).get("framesDecoded")}
        if leg == "ours":
            target, acknowledged, encoded, detail = our_target()
            row.update(estimateKbps=target, acknowledgedKbps=acknowledged, framesEncoded=encoded, width=(receiver or {}).get("width"),
                       detail=detail)
        else:
            available = (sender or {}).get("available")
            row.update(estimateKbps=None if available is None else round(available / 1000, 1),
                       sentKbps=kbps(sender, previous[0], "txBytes"), width=(sender or {}).get("width"),
                       limitation=(sender or {}).get("limitation"), framesEncoded=(sender or {}).get("framesEncoded"),
                       captureFps=(sender or {}).get("captureFps"))
        rows.append(row)
        previous, tick = (sender, receiver), tick + 1
    return rows


def leg_ours(out, display, step_seconds, bin_dir):
    sock = os.path.join(out, "ours-agent.sock")
    call = procs.start("call", [os.path.join(bin_dir, "screencast-call"), "--http", HTTP, "--ice-address",
                                "127.0.0.1", "--ice-ports", "%d-%d" % CALL_PORTS, "--ice-tcp", "off",  # the shaping is on UDP
                                "--socket", sock, "--stats-interval", "0"],
                       log_path=os.path.join(out, "ours-call.log"))
    stats = lambda: procs.http_json("http://%s/stats" % HTTP)  # noqa: E731
    if not procs.wait_for(lambda: os.path.exists(sock), 10):
        raise RuntimeError("the call made no socket: " + call.log()[-800:])
    procs.start("agent", [os.path.join(bin_dir, "screencast-agent"), "--display", display, "--socket", sock,
                          "--fps", str(FPS), "--stats-interval", "0"], log_path=os.path.join(out, "ours-agent.log"))
    if not procs.wait_for(lambda: stats()["frames"]["encoded"] > 0, 15, 0.2):
        raise RuntimeError("the call encoded nothing from the agent: " + call.log()[-800:])

    def our_target():
        try:
            now = stats()
            peers = now["viewers"].get("peers") or []
            congestion = (peers[0].get("congestion") or {}) if peers else {}
            detail = {"peer": peers[0] if peers else None, "bitrate": now["viewers"].get("bitrate"), "frames": now.get("frames"),
                      "encodedBytes": now.get("bytes"), "encoderKbps": now.get("bitrateKbps"), "rate": now.get("rate"),
                      "dropped": now.get("dropped")}
            return congestion.get("targetKbps"), congestion.get("acknowledgedKbps"), now["frames"]["encoded"], detail
        except (OSError, ValueError, KeyError):
            return None, None, None, None

    def shape(_):
        tc("filter add dev lo parent 1: protocol ip prio 1 u32 match ip protocol 17 0xff match ip sport %d 0xffc0 flowid 1:10"
           % CALL_PORTS[0])

    profile = tempfile.mkdtemp(prefix="network-real-ours-")
    driver = browser(profile, [], os.path.join(out, "ours-chromedriver.log"))
    try:
        driver.get("http://%s/" % HTTP)
        rows = profile_run("ours", driver, shape, our_target, step_seconds)
        port = (driver.execute_async_script(STATS_JS % PEERS["ours"])[1] or {}).get("localPort")
        note = {"viewerPort": port, "viewerPortShaped": port is not None and CALL_PORTS[0] <= port <= CALL_PORTS[1],
                "bitrateKbps": stats().get("bitrateKbps")}
        return rows, note
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def leg_chrome(out, step_seconds):
    g2g.anchor_network()
    g2g.anchor_route(True)
    server, base = g2g_browser.serve_here()
    profile = tempfile.mkdtemp(prefix="network-real-chrome-")
    driver = browser(profile, g2g_browser.ANCHOR_FLAGS, os.path.join(out, "chrome-chromedriver.log"))
    note = {}

    def shape(sender):
        port = (sender or {}).get("localPort")
        if not port:
            raise RuntimeError("PC1 has no selected candidate pair in getStats: %r" % sender)
        note.update(senderPort=port, senderAddress=sender.get("localAddress"))
        tc("filter add dev lo parent 1: protocol ip prio 1 u32 match ip protocol 17 0xff match ip sport %d 0xffff flowid 1:10" % port)

    try:
        driver.get(base + "g2g_anchor.html?fps=%d&width=%d&height=%d" % (FPS, WIDTH, HEIGHT))
        state = g2g_browser.wait_until(driver, "return window.anchor.state === 'playing' || window.anchor.state", 30)
        if state is not True:
            raise RuntimeError("the anchor page did not play within 30 s (state %r)" % state)
        rows = profile_run("chrome", driver, shape, None, step_seconds)
        note["captureSettings"] = driver.execute_script("return window.anchor.settings")
        return rows, note
    finally:
        driver.quit()
        server.shutdown()
        g2g.anchor_route(False)
        shutil.rmtree(profile, ignore_errors=True)


def summarise(rows, step_seconds):
    """Adaptation per step (network.py's rule on the estimate) and each capacity's settled half."""
    valid = [{"second": r["t"], "capacity_kbps": r["capacityKbps"], "target_kbps": r["estimateKbps"]}
             for r in rows if r["estimateKbps"] is not None]
    steps = network.adaptation(valid)
    phases = []
    for index, (_, capacity) in enumerate(STEPS):
        half = [r for r in rows if (index + 0.5) * step_seconds <= r["t"] < (index + 1) * step_seconds]
        estimates = [r["estimateKbps"] for r in half if r["estimateKbps"] is not None]
        phases.append({"capacityKbps": capacity, "estimateMin": min(estimates, default=None),
                       "estimateMedian": median(half, "estimateKbps"), "receivedMedian": median(half, "receivedKbps"),
                       "decodedFps": per_second(half, "framesDecoded"), "encodedFps": per_second(half, "framesEncoded")})
    return steps, phases


def median(rows, key):
    values = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(values) if values else None


def per_second(rows, key):
    """How fast the counter `key` rose from the first row to the last."""
    if len(rows) < 2 or rows[0].get(key) is None or rows[-1].get(key) is None:
        return None
    return (rows[-1][key] - rows[0][key]) / (rows[-1]["t"] - rows[0]["t"])


def plot(legs, png, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax, fps) = plt.subplots(2, 1, figsize=(10, 6.5), dpi=110, sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    colours = {"ours": "tab:blue", "chrome": "tab:orange"}
    names = {"ours": "ours (screencast-call)", "chrome": "Chromium sender"}
    capacity_drawn = False
    for leg, data in legs.items():
        rows = data.get("rows") or []
        if not rows:
            continue
        t = [r["t"] for r in rows]
        if not capacity_drawn:
            ax.step(t, [r["capacityKbps"] for r in rows], where="post", color="0.55", linewidth=2, label="link capacity")
            capacity_drawn = True
        estimate = "GCC target" if leg == "ours" else "availableOutgoingBitrate"
        ax.plot(t, [r["estimateKbps"] for r in rows], color=colours[leg], linewidth=2, label="%s: %s" % (names[leg], estimate))
        ax.plot(t, [r["receivedKbps"] for r in rows], color=colours[leg], linestyle="--", linewidth=1, label="%s: received" % names[leg])
        fps.plot(t, [r["fps"] for r in rows], color=colours[leg], label=names[leg])
    ax.set_ylabel("kbit/s")
    ax.set_title(title, fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    fps.set_ylabel("fps decoded")
    fps.set_xlabel("seconds since the first decoded frame")
    fps.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)


def inside(args):
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=True).stdout
    if [line.split(":")[1].strip() for line in links.splitlines()] != ["lo"]:
        raise SystemExit("network_real: not in a loopback-only namespace; run it without --inside")
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    xvfb = xscene.Xvfb(WIDTH, HEIGHT)
    os.environ["DISPLAY"] = xvfb.display
    # Chromium's window lister asks for WM_STATE by name; without a window manager the atom must be made (g2g's painter
    # does the same), or getDisplayMedia's source listing ends the browser with BadAtom.
    from Xlib import display as xdisplay
    connection = xdisplay.Display(xvfb.display)
    connection.intern_atom("WM_STATE")
    connection.close()
    # A terminal window scrolling one text line every 33 ms (810x420 px, a third of the screen) beside two still
    # ones. Still costly: both senders run at 1-3 fps at 1 Mbit/s (a full-screen scroll held both near 1 fps even
    # at 3 Mbit/s in a trial).
    scene = xscene.Scene(xvfb, "static")
    scene._xterm("%dx%d+%d+%d" % (SCROLLER_COLUMNS, SCROLLER_ROWS, 360, 200), "scroller", xscene.SCROLLER, "0.033")
    result = {"profile": {"steps": [{"fromSecond": i * args.step_seconds, "kbps": k} for i, (_, k) in enumerate(STEPS)],
                          "endSecond": 3 * args.step_seconds, "tbf": {"burst": BURST, "latency": LATENCY},
                          "screen": "%dx%d Xvfb: two still xterms and a %dx%d-cell xterm scrolling a line every 33 ms" % (
                              WIDTH, HEIGHT, SCROLLER_COLUMNS, SCROLLER_ROWS)},
              "machine": {"cores": os.cpu_count(), "loadAverageAtStart": procs.load_average()}, "build": build(args.bin), "legs": {}}
    failed = False
    try:
        for leg in args.legs.split(","):
            busy, started = procs.system_busy(), time.monotonic()
            data = {"error": None}
            try:
                bottleneck(STEPS[0][0])
                rows, note = leg_ours(out, xvfb.display, args.step_seconds, args.bin) if leg == "ours" else leg_chrome(out, args.step_seconds)
                data.update(note=note, rows=rows)
                data["steps"], data["phases"] = summarise(rows, args.step_seconds)
            except Exception as failure:  # recorded against the leg; the other leg still runs
                data["error"] = "%s: %s" % (type(failure).__name__, str(failure)[:1500])
                failed = True
            finally:
                procs.stop_all()
                tc("qdisc del dev lo root", check=False)
            data["busyCores"] = round((procs.system_busy() - busy) / (time.monotonic() - started), 2)
            data["loadAverageAtEnd"] = procs.load_average()
            result["legs"][leg] = data
            print(line(leg, data), flush=True)
    finally:
        scene.stop()
        xvfb.stop()
    with open(os.path.join(out, "network-real.json"), "w") as f:
        json.dump(result, f, indent=1)
    title = ("Real bottleneck (tc HTB+TBF on lo, burst %s): ours vs Chromium's sender, %dx%d scrolling xterm; "
             "%d cores, load %.1f at start" % (BURST, WIDTH, HEIGHT, os.cpu_count(), result["machine"]["loadAverageAtStart"][0]))
    plot(result["legs"], os.path.join(out, "network-real.png"), title)
    return 1 if failed else 0


def build(bin_dir):
    """Which screencast-call ran (the one in bin_dir): the binary's modification time (UTC) and the checkout's commit."""
    binary = os.path.join(bin_dir, "screencast-call")
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    return {"callBinaryModified": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.path.getmtime(binary))), "gitHead": head or None}


def line(leg, data):
    if data.get("error"):
        return "%s: FAILED %s" % (leg, data["error"])
    steps = "; ".join("%g→%g kbit/s: %s" % (s["fromKbps"], s["toKbps"], "never" if s["seconds"] is None else "%.1f s" % s["seconds"])
                      for s in data["steps"])
    settled = ", ".join("%g: est %s rx %s fps %s" % (p["capacityKbps"], fmt(p["estimateMedian"]), fmt(p["receivedMedian"]),
                                                      fmt(p["decodedFps"], "%.1f")) for p in data["phases"])
    return "%s: adaptation %s | last half of each step (median kbit/s, decoded fps) %s | busy cores %.2f" % (
        leg, steps, settled, data["busyCores"])


def fmt(value, form="%.0f"):
    return "-" if value is None else form % value


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="folder for network-real.json, network-real.png and the logs")
    parser.add_argument("--step-seconds", type=float, default=20, help="seconds at each capacity (default 20)")
    parser.add_argument("--legs", default="ours,chrome", help="which legs, in order (default ours,chrome)")
    parser.add_argument("--bin", default=os.path.join(ROOT, ".build/debug"),
                        help="folder of the screencast-call and -agent to run (default .build/debug)")
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)  # already in the namespace
    args = parser.parse_args()
    args.bin = os.path.abspath(args.bin)
    if any(leg not in PEERS for leg in args.legs.split(",")):
        parser.error("--legs: ours, chrome or both")
    if args.inside:
        return inside(args)
    unshare = ["unshare", "--net"] if os.geteuid() == 0 else ["unshare", "--user", "--map-root-user", "--net"]
    os.makedirs(args.out, exist_ok=True)
    argv = [os.path.abspath(__file__), "--inside", "--out", os.path.abspath(args.out), "--step-seconds", str(args.step_seconds),
            "--legs", args.legs, "--bin", args.bin]
    return subprocess.run(unshare + ["sh", "-c", 'ip link set lo up && exec /usr/bin/python3 "$@"', "sh"] + argv).returncode


if __name__ == "__main__":
    sys.exit(main())
