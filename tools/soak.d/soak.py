"""The long soak (tools/soak): agent + call at 1080p30 on a continuously scrolling screen, four viewers.

Runs inside the loopback-only network namespace tools/soak makes. What runs:

  Xvfb 1920x1080x24 with the benchmarks' "scrolling" scene (a full-screen xterm printing a line every 33 ms:
  the whole picture changes every frame), screencast-agent --fps 30 (JPEG wire), screencast-call, one aiortc
  viewer (tests' whep_viewer.py: decodes every frame, reports its decoded frames and gaps every second) and
  three light viewers (screencast-bench viewers: ICE + DTLS, SRTP counted undecrypted).

Every interval (10 minutes; 1 minute with --minutes) one row: per process CPU (% of one core over the
interval), RSS (MiB), open descriptors and threads; the call's encoded fps; per viewer the frames the call
sent it (fps) and its stalls (no frame sent to it for more than 1 s, from /stats read every 0.25 s); the aiortc
viewer's decoded fps and its stalls (gaps over 1 s between decoded frames); the load average. At the end a
verdict against issue 13's bar: no stall, call and agent RSS growth < 5 MiB (first row to last), descriptors
and threads flat (the same in the first and last rows, within 2 threads: libdispatch's pool breathes).

Prints the rows as they come and the Markdown report at the end (--markdown FILE writes it there too,
--json FILE every number). Exit 0 when the bar is met, 1 when not, 2 when something failed to start.
"""

import argparse
import json
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "bench.d"))

import procs  # noqa: E402
import xscene  # noqa: E402

WIDTH, HEIGHT, FPS = 1920, 1080, 30
STALL_SECONDS = 1.0
SAMPLE_SECONDS = 0.25
RSS_GROWTH_LIMIT_MIB = 5.0
THREAD_SLACK = 2


def log(message):
    sys.stderr.write("soak: %s\n" % message)
    sys.stderr.flush()


def descriptors(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return -1


def descriptor_kinds(pid):
    """Open descriptors by kind (socket, pipe, anon_inode:[eventfd], /dev/..., file), so a change of one can be
    told apart."""
    kinds = {}
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
            except OSError:
                continue
            kind = target.split(":[")[0] if ":[" in target else target.split(":")[0] if target.startswith("anon_inode:") else \
                target if target.startswith("/dev/") else "file"
            kinds[kind] = kinds.get(kind, 0) + 1
    except OSError:
        pass
    return kinds


def threads(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


class Watched:
    """One process the rows report on (CPU over the interval, RSS, descriptors, threads)."""

    def __init__(self, name, pid, proc=None):
        self.name, self.pid, self.proc = name, pid, proc
        self.last_cpu = self.cpu()

    def cpu(self):
        try:
            with open("/proc/%d/stat" % self.pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / procs.CLOCK_TICKS
        except (OSError, IndexError, ValueError):
            return self.last_cpu

    def sample(self, seconds):
        now = self.cpu()
        used, self.last_cpu = now - self.last_cpu, now
        rss = 0.0
        try:
            with open("/proc/%d/status" % self.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss = int(line.split()[1]) / 1024
        except OSError:
            pass
        alive = os.path.exists("/proc/%d" % self.pid)
        return {"cpuPercent": round(100 * used / seconds, 1) if seconds > 0 else 0.0, "rssMiB": round(rss, 1),
                "fds": descriptors(self.pid), "fdKinds": descriptor_kinds(self.pid), "threads": threads(self.pid),
                "alive": alive}


class PeerWatch:
    """Frames the call sent one viewer, and its stalls (no frame sent for more than STALL_SECONDS)."""

    def __init__(self, now, frames):
        self.frames = frames
        self.changed_at = now
        self.stalled = False
        self.stalls = 0
        self.longest = 0.0

    def update(self, now, frames):
        if frames != self.frames:
            self.frames, self.changed_at, self.stalled = frames, now, False
            return
        gap = now - self.changed_at
        self.longest = max(self.longest, gap)
        if gap > STALL_SECONDS and not self.stalled:
            self.stalled = True
            self.stalls += 1


def last_progress(path):
    try:
        with open(path) as f:
            lines = f.read().splitlines()
        return json.loads(lines[-1]) if lines else None
    except (OSError, ValueError):
        return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hours", type=float, default=0)
    parser.add_argument("--minutes", type=float, default=0)
    parser.add_argument("--bin", required=True, help="folder with screencast-call, -agent, -bench")
    parser.add_argument("--python", required=True, help="the venv's python (aiortc)")
    parser.add_argument("--markdown")
    parser.add_argument("--json")
    parser.add_argument("--command-line", default="tools/soak")
    args = parser.parse_args()
    seconds = args.hours * 3600 + args.minutes * 60
    if seconds <= 0:
        seconds = 3600
    interval = 60.0 if args.minutes > 0 and args.hours == 0 else 600.0
    if seconds < interval:
        interval = seconds

    work = procs_work()
    xvfb = scene = None
    rows = []
    result = {"command": args.command_line, "seconds": seconds, "intervalSeconds": interval,
              "machine": procs.machine(), "loadBefore": procs.load_average()}
    try:
        xvfb = xscene.Xvfb(WIDTH, HEIGHT)
        scene = xscene.Scene(xvfb, "scrolling")
        socket_path = os.path.join(work, "agent.sock")
        call = procs.start("call", [os.path.join(args.bin, "screencast-call"), "--http", "127.0.0.1:0", "--ice-address", "127.0.0.1",
                                    "--socket", socket_path, "--stats-interval", "0", "--log-level", "info"],
                           log_path=os.path.join(work, "call.log"))
        line = procs.wait_for(lambda: next((l for l in call.log().splitlines() if "viewer page" in l), None), 15)
        if not line or "whep=" not in line:
            raise RuntimeError("the call did not start:\n" + call.log()[-3000:])
        whep = line.split("whep=")[1].split()[0]
        stats_url = whep.rsplit("/", 1)[0] + "/stats"
        agent = procs.start("agent", [os.path.join(args.bin, "screencast-agent"), "--display", xvfb.display, "--socket", socket_path,
                                      "--fps", str(FPS), "--stats-interval", "60"], log_path=os.path.join(work, "agent.log"))
        if not procs.wait_for(lambda: (procs.http_json(stats_url).get("frames", {}).get("decoded", 0) > 0), 20):
            raise RuntimeError("no frame from the agent:\n" + agent.log()[-2000:])
        stop_file = os.path.join(work, "stop")
        progress = os.path.join(work, "aiortc.progress")
        aiortc = procs.start("aiortc", [args.python, os.path.join(ROOT, "Tests", "EndToEndTests", "Peers", "whep_viewer.py"),
                                        "--url", whep, "--seconds", str(seconds + 120), "--until-file", stop_file,
                                        "--progress", progress], log_path=os.path.join(work, "aiortc.log"),
                             stdout_path=os.path.join(work, "aiortc.json"))
        light = procs.start("light", [os.path.join(args.bin, "screencast-bench"), "viewers", "--url", whep, "--count", "3",
                                      "--seconds", str(int(seconds + 60))], log_path=os.path.join(work, "light.log"),
                            stdout_path=os.path.join(work, "light.out"))
        if not procs.wait_for(lambda: procs.http_json(stats_url)["viewers"]["connected"] >= 4, 30):
            raise RuntimeError("4 viewers did not connect: %s" % json.dumps(procs.http_json(stats_url)["viewers"])[:2000])
        watched = [Watched("call", call.pid, call), Watched("agent", agent.pid, agent), Watched("Xvfb", xvfb.pid),
                   Watched("aiortc viewer", aiortc.pid, aiortc), Watched("light viewers", light.pid, light)]
        log("4 viewers on %s; %d s, a row every %d s (work folder %s)" % (whep, seconds, interval, work))

        peers = {}
        start = time.monotonic()
        row_start = start
        first = procs.http_json(stats_url)
        encoded_at_row = first["frames"]["encoded"]
        sent_at_row = {}
        aiortc_at_row = last_progress(progress) or {"frames": 0, "stallsOver1000": 0}
        stalls_at_row = {}
        failures = []
        while True:
            now = time.monotonic()
            # Descriptors and threads are read before this round's GET /stats: the call's side of an HTTP
            # connection (and its thread) outlives the response by a moment, so reading after it counted the
            # poller's own connection now and then (25/26 alternating in the first runs).
            due = now - row_start >= interval or now - start >= seconds
            samples = {w.name: w.sample(now - row_start) for w in watched} if due else None
            try:
                stats = procs.http_json(stats_url, timeout=5)
            except Exception as error:  # the call stopped answering: a stall of every viewer
                failures.append("GET /stats failed at %.0f s: %r" % (now - start, error))
                stats = None
            if stats:
                for peer in stats["viewers"]["peers"]:
                    watch = peers.get(peer["id"])
                    if watch is None:
                        peers[peer["id"]] = PeerWatch(now, peer["framesSent"])
                        sent_at_row[peer["id"]] = peer["framesSent"]
                    else:
                        watch.update(now, peer["framesSent"])
            if due:
                span = now - row_start
                row = {"atSeconds": round(now - start), "load": procs.load_average(), "processes": samples}
                if stats:
                    row["encodedFps"] = round((stats["frames"]["encoded"] - encoded_at_row) / span, 1)
                    encoded_at_row = stats["frames"]["encoded"]
                    row["viewers"] = stats["viewers"]["connected"]
                    fps, stalls = [], 0
                    for peer_id, watch in peers.items():
                        fps.append((watch.frames - sent_at_row[peer_id]) / span)
                        sent_at_row[peer_id] = watch.frames
                        stalls += watch.stalls - stalls_at_row.get(peer_id, 0)
                        stalls_at_row[peer_id] = watch.stalls
                    row["sentFps"] = [round(f, 1) for f in fps]
                    row["sendStalls"] = stalls
                    row["longestSendGapSeconds"] = round(max((w.longest for w in peers.values()), default=0), 2)
                    for w in peers.values():
                        w.longest = 0.0
                seen = last_progress(progress)
                if seen:
                    row["aiortcFps"] = round((seen["frames"] - aiortc_at_row["frames"]) / span, 1)
                    row["aiortcStalls"] = seen["stallsOver1000"] - aiortc_at_row["stallsOver1000"]
                    row["aiortcMaxGapMs"] = seen["maxGapMs"]
                    row["aiortcState"] = seen["state"]
                    aiortc_at_row = seen
                rows.append(row)
                print(format_row(row), flush=True)
                row_start = now
                if now - start >= seconds:
                    break
            dead = [w.name for w in watched if not os.path.exists("/proc/%d" % w.pid) or (w.proc and not w.proc.alive())]
            if dead:
                failures.append("ended early: %s" % ", ".join(dead))
                break
            time.sleep(SAMPLE_SECONDS)
        open(stop_file, "w").close()
        aiortc.wait(30)
        result["aiortcReport"] = safe_json(aiortc.stdout())
        result["failures"] = failures
    except Exception as error:
        log("failed: %s" % error)
        result["failures"] = ["%s" % error]
        result["rows"] = rows
        write_outputs(args, result)
        return 2
    except (KeyboardInterrupt, SystemExit):
        # SIGINT, or SIGTERM/SIGHUP (stop_on_signal): the rows so far are kept, then everything is stopped.
        log("stopped after %d row(s)" % len(rows))
        result["failures"] = ["stopped by a signal"]
        result["rows"] = rows
        write_outputs(args, result)
        raise
    finally:
        procs.stop_all()
        if scene:
            scene.stop()
        if xvfb:
            xvfb.stop()
    result["rows"] = rows
    result["loadAfter"] = procs.load_average()
    result["verdict"] = verdict(rows, result["failures"])
    write_outputs(args, result)
    print(markdown(result))
    return 0 if result["verdict"]["met"] else 1


def procs_work():
    import tempfile
    return tempfile.mkdtemp(prefix="screencast-soak.")


def safe_json(text):
    try:
        return json.loads(text.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def format_row(row):
    parts = ["%5.0f min" % (row["atSeconds"] / 60)]
    for name, p in row["processes"].items():
        parts.append("%s cpu %.1f%% rss %.1f MiB fds %d thr %d" % (name, p["cpuPercent"], p["rssMiB"], p["fds"], p["threads"]))
    parts.append("encoded %.1f fps" % row.get("encodedFps", 0))
    parts.append("sent fps %s stalls %s" % (row.get("sentFps"), row.get("sendStalls")))
    parts.append("aiortc %s fps stalls %s" % (row.get("aiortcFps"), row.get("aiortcStalls")))
    parts.append("load %s" % row["load"])
    return "soak: " + "; ".join(parts)


def verdict(rows, failures):
    reasons = list(failures)
    if len(rows) < 2:
        reasons.append("fewer than two rows")
        return {"met": False, "reasons": reasons}
    first, last = rows[0], rows[-1]
    stalls = sum(r.get("sendStalls", 0) + r.get("aiortcStalls", 0) for r in rows)
    if stalls:
        reasons.append("%d stalls over 1 s" % stalls)
    growth = {}
    for name in ("call", "agent"):
        grew = last["processes"][name]["rssMiB"] - first["processes"][name]["rssMiB"]
        growth[name] = round(grew, 1)
        if grew >= RSS_GROWTH_LIMIT_MIB:
            reasons.append("%s RSS grew %.1f MiB" % (name, grew))
        if last["processes"][name]["fds"] != first["processes"][name]["fds"]:
            before, after = first["processes"][name].get("fdKinds", {}), last["processes"][name].get("fdKinds", {})
            changed = ", ".join("%s %d → %d" % (k, before.get(k, 0), after.get(k, 0))
                                for k in sorted(set(before) | set(after)) if before.get(k, 0) != after.get(k, 0))
            reasons.append("%s descriptors %d → %d%s" % (name, first["processes"][name]["fds"], last["processes"][name]["fds"],
                                                         " (%s)" % changed if changed else ""))
        if abs(last["processes"][name]["threads"] - first["processes"][name]["threads"]) > THREAD_SLACK:
            reasons.append("%s threads %d → %d" % (name, first["processes"][name]["threads"], last["processes"][name]["threads"]))
    if any(r.get("viewers", 4) < 4 for r in rows):
        reasons.append("a viewer was lost")
    return {"met": not reasons, "reasons": reasons, "rssGrowthMiB": growth, "stalls": stalls}


def markdown(result):
    rows = result.get("rows", [])
    names = list(rows[0]["processes"].keys()) if rows else []
    out = ["| at | " + " | ".join("%s CPU %% / RSS MiB / fds / threads" % n for n in names)
           + " | encoded fps | sent fps (4 viewers) | send stalls | aiortc fps | aiortc stalls | load |",
           "|" + "---|" * (len(names) + 7)]
    for r in rows:
        cells = ["%.0f min" % (r["atSeconds"] / 60)]
        for n in names:
            p = r["processes"][n]
            cells.append("%.1f / %.1f / %d / %d" % (p["cpuPercent"], p["rssMiB"], p["fds"], p["threads"]))
        cells += ["%.1f" % r.get("encodedFps", 0), " ".join("%.1f" % f for f in r.get("sentFps", [])),
                  str(r.get("sendStalls", "-")), str(r.get("aiortcFps", "-")), str(r.get("aiortcStalls", "-")),
                  " ".join("%.2f" % x for x in r["load"])]
        out.append("| " + " | ".join(cells) + " |")
    v = result.get("verdict", {"met": False, "reasons": result.get("failures", [])})
    out.append("")
    out.append("Verdict: %s%s. Load average before %s, after %s." % (
        "met" if v["met"] else "NOT met", "" if v["met"] else " (" + "; ".join(v["reasons"]) + ")",
        " ".join("%.2f" % x for x in result.get("loadBefore", [])), " ".join("%.2f" % x for x in result.get("loadAfter", []))))
    if "rssGrowthMiB" in v:
        out.append("RSS growth first row → last: call %.1f MiB, agent %.1f MiB; stalls over 1 s: %d." % (
            v["rssGrowthMiB"]["call"], v["rssGrowthMiB"]["agent"], v["stalls"]))
    return "\n".join(out)


def write_outputs(args, result):
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(result) + "\n")


def stop_on_signal(signum, _frame):
    """SIGTERM and SIGHUP end the soak as SIGINT does: through main's cleanup (no orphaned call, agent, Xvfb)."""
    sys.exit(128 + signum)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, stop_on_signal)
    signal.signal(signal.SIGHUP, stop_on_signal)
    try:
        sys.exit(main())
    finally:
        procs.stop_all()
