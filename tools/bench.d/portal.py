#!/usr/bin/python3
"""Portal (Wayland, PipeWire) capture against X11 (MIT-SHM) capture, same agent, same scene size, same wire.

For each source: a desktop of --size (default 1920x1080, 1080p) with the test scene (background #1e90ff, a
320x180 terminal at 960,540 printing a line every 33 ms: ~30 changes a second), the agent (release build, --fps
30, JPEG) sending to a stand-in call that reads the socket and stamps each frame on arrival. Measured:
  - agent CPU (utime+stime from /proc) per screen-second and per frame, over a steady window;
  - capture -> received on the socket, p50/p95 (Buffer-Timestamp is CLOCK_MONOTONIC; so is the reader's clock).
    The capture time differs: X11 = after the grab; portal = when PipeWire delivered the buffer;
  - screen change -> on the wire: the background toggled (swaymsg / xsetroot) N times, from the command's start
    to the first frame whose pixel at (800,400) shows the new colour (command and JPEG decode included).
  - with the release call and bench built (else skipped, said in the JSON): capture -> RTP sent, p50/p99, from the
    call's /stats (`captureToSentMs` of one `screencast-bench viewers` peer on loopback), agent -> real call.
Wayland desktop: ../shared/wayland (setup.sh, up.sh, down.sh, own W). X11: Xvfb -displayfd + xterm.
Usage: tools/bench.d/portal.py [--seconds S] [--toggles N] [--size WxH] [--json FILE]   (root; after a release build)
"""
import argparse, io, json, os, random, select, shutil, signal, socket, subprocess, sys, tempfile, threading, time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.path.join(os.path.dirname(REPO), "shared", "wayland")
AGENT = os.path.join(REPO, ".build", "release", "screencast-agent")
CALL = os.path.join(REPO, ".build", "release", "screencast-call")
BENCH = os.path.join(REPO, ".build", "release", "screencast-bench")
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


class Reader:
    """A stand-in call: listens on `path`, parses frames, keeps (arrival, capture timestamp, jpeg) of each."""
    def __init__(self, path):
        self.path = path
        self.frames = []
        self.lock = threading.Lock()
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(path)
        self.server.listen(1)
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        conn, _ = self.server.accept()
        buf = b""
        while True:
            data = conn.recv(1 << 20)
            if not data:
                return
            now = time.monotonic()
            buf += data
            while True:
                end = buf.find(b"\r\n\r\n")
                if end < 0:
                    break
                headers = {}
                for line in buf[:end].split(b"\r\n")[1:]:
                    k, _, v = line.partition(b":")
                    headers[k.strip().lower()] = v.strip()
                length = int(headers[b"content-length"])
                if len(buf) < end + 4 + length:
                    break
                body = buf[end + 4:end + 4 + length]
                buf = buf[end + 4 + length:]
                with self.lock:
                    self.frames.append((now, int(headers.get(b"buffer-timestamp", b"0")) / 1e6, body))

    def snapshot(self):
        with self.lock:
            return list(self.frames)


def pixel(jpeg, x=800, y=400):
    from PIL import Image
    return Image.open(io.BytesIO(jpeg)).convert("RGB").getpixel((x, y))


def near(p, rgb):
    return all(abs(a - b) <= 8 for a, b in zip(p, rgb))


def pct(values, q):
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 1) if values else None


def measure(name, agent_env, agent_args, toggle, seconds, toggles, work):
    sock = os.path.join(work, name + ".sock")
    reader = Reader(sock)
    agent = subprocess.Popen([AGENT, "--socket", sock, "--fps", "30", "--stats-interval", "0"] + agent_args,
                             env=agent_env, stderr=open(os.path.join(work, name + "-agent.log"), "w"))
    try:
        deadline = time.monotonic() + 20
        while len(reader.snapshot()) < 5:
            if time.monotonic() > deadline or agent.poll() is not None:
                raise RuntimeError("%s: no frames: %s" % (name, open(os.path.join(work, name + "-agent.log")).read()[-1500:]))
            time.sleep(0.05)
        time.sleep(2)  # warm
        c0, t0, n0 = cpu_seconds(agent.pid), time.monotonic(), len(reader.snapshot())
        time.sleep(seconds)
        c1, t1, frames = cpu_seconds(agent.pid), time.monotonic(), reader.snapshot()
        window = [f for f in frames[n0:] if f[1] > 0]
        latencies = [(arrival - captured) * 1000 for arrival, captured, _ in window]
        steady = {"seconds": round(t1 - t0, 1), "frames": len(frames) - n0, "fps": round((len(frames) - n0) / (t1 - t0), 1),
                  "cpuPercent": round(100 * (c1 - c0) / (t1 - t0), 1),
                  "cpuMsPerFrame": round(1000 * (c1 - c0) / max(1, len(frames) - n0), 2),
                  "captureToReceivedMs": {"p50": pct(latencies, 0.5), "p95": pct(latencies, 0.95)}}
        changes = []
        colours = [(0, 255, 0), (255, 0, 255)]
        for i in range(toggles):
            rgb = colours[i % 2]
            count = len(reader.snapshot())
            asked = time.monotonic()
            toggle("#%02x%02x%02x" % rgb)
            seen = None
            deadline = asked + 3
            checked = count
            while time.monotonic() < deadline and seen is None:
                frames = reader.snapshot()
                for arrival, _, body in frames[checked:]:
                    if near(pixel(body), rgb):
                        seen = arrival
                        break
                checked = len(frames)
                time.sleep(0.002)
            changes.append(round((seen - asked) * 1000, 1) if seen else None)
            time.sleep(0.3 + random.random() * 0.2)
        got = [c for c in changes if c is not None]
        return {"steady": steady, "changeToWireMs": {"p50": pct(got, 0.5), "p95": pct(got, 0.95), "missed": len(changes) - len(got),
                                                     "all": changes}}
    finally:
        agent.send_signal(signal.SIGTERM)
        try:
            agent.wait(10)
        except subprocess.TimeoutExpired:
            agent.kill()


def through_call(name, agent_env, agent_args, seconds, work):
    """agent -> the real call -> one light WHEP viewer on loopback; the call's capture -> RTP-sent p50/p99."""
    if not (os.path.exists(CALL) and os.path.exists(BENCH)):
        return {"skipped": "no release screencast-call / screencast-bench (swift build -c release)"}
    sock = os.path.join(work, name + "-call.sock")
    log = os.path.join(work, name + "-call.log")
    call = subprocess.Popen([CALL, "--http", "127.0.0.1:0", "--ice-address", "127.0.0.1", "--socket", sock,
                             "--stats-interval", "0"], stderr=open(log, "w"), stdout=subprocess.DEVNULL,
                            env=dict(os.environ, XDG_STATE_HOME=os.path.join(work, name + "-call-state")))
    agent = viewer = None
    try:
        port = None
        deadline = time.monotonic() + 20
        while port is None and time.monotonic() < deadline:
            for word in open(log).read().split():
                if word.startswith("whep=http://127.0.0.1:"):
                    port = int(word.split(":")[2].split("/")[0])
            time.sleep(0.05)
        if port is None:
            raise RuntimeError("%s: the call did not start: %s" % (name, open(log).read()[-1500:]))
        agent = subprocess.Popen([AGENT, "--socket", sock, "--fps", "30", "--stats-interval", "0"] + agent_args,
                                 env=agent_env, stderr=open(os.path.join(work, name + "-agent2.log"), "w"))
        viewer = subprocess.Popen([BENCH, "viewers", "--url", "http://127.0.0.1:%d/whep" % port, "--count", "1",
                                   "--seconds", str(int(seconds + 10))], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(2 + seconds)
        import urllib.request
        stats = json.load(urllib.request.urlopen("http://127.0.0.1:%d/stats" % port, timeout=5))
        peers = stats.get("viewers", {}).get("peers") or [{}]
        return {"captureToSentMs": peers[0].get("captureToSentMs"), "viewers": len(peers)}
    finally:
        for p in (viewer, agent, call):
            if p and p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()


def wayland(seconds, toggles, work, size):
    W = os.path.join(work, "wl")
    env = dict(os.environ, W=W, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["bash", os.path.join(SHARED, "setup.sh")], env=env, check=True, stdout=subprocess.DEVNULL)
    try:
        subprocess.run(["bash", os.path.join(SHARED, "up.sh")], env=env, check=True, stdout=subprocess.DEVNULL)
        client = {"PATH": "/usr/bin:/bin", "XDG_STATE_HOME": os.path.join(work, "state")}
        for line in open(os.path.join(W, "env.sh")):
            for word in line.split()[1:]:
                k, _, v = word.partition("=")
                client[k] = v
        sway = lambda *a: subprocess.run(["swaymsg"] + list(a), env=client, check=True, stdout=subprocess.DEVNULL)
        sway("output", "HEADLESS-1", "resolution", size)
        sway("exec", "foot --app-id=anim sh -c 'while :; do date +%s.%N; sleep 0.033; done'")
        time.sleep(1)
        # A first run to get the restore token (no chooser here anyway), then the measured one.
        subprocess.run([AGENT, "--source", "portal", "--output", os.path.join(work, "first.frames"), "--frames", "1"],
                       env=client, check=True, stderr=subprocess.DEVNULL)
        result = measure("portal", client, ["--source", "portal"],
                         lambda colour: sway("output", "HEADLESS-1", "bg", colour, "solid_color"), seconds, toggles, work)
        result["call"] = through_call("portal", client, ["--source", "portal"], seconds, work)
        return result
    finally:
        subprocess.run(["bash", os.path.join(SHARED, "down.sh")], env=env, stdout=subprocess.DEVNULL)


def x11(seconds, toggles, work, size):
    read_end, write_end = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_end), "-screen", "0", size + "x24", "-nolisten", "tcp"],
                            pass_fds=[write_end], stderr=subprocess.DEVNULL)
    os.close(write_end)
    display = ":" + os.read(read_end, 16).decode().strip()
    env = {"PATH": "/usr/bin:/bin", "DISPLAY": display}
    term = None
    try:
        subprocess.run(["xsetroot", "-solid", "#1e90ff"], env=env, check=True)
        term = subprocess.Popen(["xterm", "-geometry", "53x13+960+540", "-bg", "black", "-fg", "white", "-e",
                                 "sh", "-c", "while :; do date +%s.%N; sleep 0.033; done"], env=env)
        time.sleep(1)
        args = ["--source", "x11", "--display", display, "--cursor", "off"]
        result = measure("x11", env, args,
                         lambda colour: subprocess.run(["xsetroot", "-solid", colour], env=env, check=True), seconds, toggles, work)
        subprocess.run(["xsetroot", "-solid", "#1e90ff"], env=env, check=True)
        result["call"] = through_call("x11", env, args, seconds, work)
        return result
    finally:
        for p in (term, xvfb):
            if p:
                p.terminate()
                p.wait(5)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--toggles", type=int, default=10)
    parser.add_argument("--size", default="1920x1080", help="the screen of both desktops, WxH (default 1920x1080)")
    parser.add_argument("--json")
    args = parser.parse_args()
    if not os.path.exists(AGENT):
        sys.exit("portal bench: no release agent at %s (swift build -c release --product screencast-agent)" % AGENT)
    work = tempfile.mkdtemp(prefix="bench-portal-")
    os.chmod(work, 0o755)  # the compositor runs as another user and must reach W inside
    try:
        results = {"load": os.getloadavg(), "size": args.size, "x11": x11(args.seconds, args.toggles, work, args.size),
                   "portal": wayland(args.seconds, args.toggles, work, args.size)}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    results["loadAfter"] = os.getloadavg()
    print(json.dumps(results, indent=1))
    if args.json:
        json.dump(results, open(args.json, "w"), indent=1)
    for name in ("x11", "portal"):
        s, c = results[name]["steady"], results[name]["changeToWireMs"]
        sent = (results[name].get("call") or {}).get("captureToSentMs") or {}
        print("%-7s cpu %5.1f %% (%5.2f ms/frame at %4.1f fps)  capture->received p50 %5s ms p95 %5s  change->wire p50 %5s ms p95 %5s"
              "  capture->RTP sent p50 %s ms p99 %s"
              % (name, s["cpuPercent"], s["cpuMsPerFrame"], s["fps"], s["captureToReceivedMs"]["p50"], s["captureToReceivedMs"]["p95"],
                 c["p50"], c["p95"], sent.get("p50"), sent.get("p99")), file=sys.stderr)


if __name__ == "__main__":
    main()
