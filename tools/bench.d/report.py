"""Turns a tools/bench result (JSON) into the printed table, the target verdicts and BENCHMARKS.md."""

import json
import os
import shlex

NOTES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "notes.md")
# The Fuzzing section (tools/fuzz's figures, hand-recorded), kept when this file is re-rendered.
FUZZING = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz.d", "results.md")


def median(values):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2


def _micro(results, stage):
    return next((m for m in results.get("micro", []) if m["stage"] == stage), None)


def targets(results):
    """Each target of issue 6 with the measured value and whether it is met (None: not measured)."""
    out = []

    def add(name, measured, limit, unit, lower_is_better=True, fmt="%.2f"):
        if measured is None:
            out.append({"name": name, "target": limit, "unit": unit, "measured": None, "met": None, "verdict": "not measured"})
            return
        met = measured <= limit if lower_is_better else measured >= limit
        if lower_is_better:
            margin = (measured - limit) / limit * 100 if limit else 0
            how = "%s %s, %s by %.0f %%" % (fmt % measured, unit, "under" if met else "over", abs(margin))
        else:
            margin = (measured - limit) / limit * 100 if limit else 0
            how = "%s %s, %s by %.0f %%" % (fmt % measured, unit, "above" if met else "below", abs(margin))
        out.append({"name": name, "target": limit, "unit": unit, "measured": round(measured, 4), "met": met,
                    "verdict": ("met: " if met else "MISSED: ") + how})

    # Each latency and CPU target is reported for both wires: JPEG (the default, what iOS senders write) and
    # raw I420 (`screencast-agent --format i420`, for a call on the same machine).
    for key, wire in (("e2e", "JPEG wire"), ("e2eLocal", "I420 wire")):
        latency = (results.get(key) or {}).get("latencyMs") or {}
        add("capture → RTP-sent p50 at 1080p30, %s" % wire, latency.get("p50"), 20, "ms")
        add("capture → RTP-sent p99 at 1080p30, %s" % wire, latency.get("p99"), 40, "ms")
    contents = ((results.get("compare") or {}).get("contents")) or {}
    for ratio, wire in (("ratioVsFfmpeg", "JPEG wire"), ("i420RatioVsFfmpeg", "I420 wire")):
        for content, limit in (("scrolling", 1.2), ("typing", 0.3), ("static", 0.05)):
            add("CPU per second vs ffmpeg, %s, %s" % (content, wire), (contents.get(content) or {}).get(ratio), limit, "×", fmt="%.3f")
    # Issue 15's goals for the local fast path (`--format shm`).
    if any("shmRatioVsFfmpeg" in (entry or {}) for entry in contents.values()):
        for content, limit in (("scrolling", 0.8), ("typing", 0.1)):
            add("CPU per second vs ffmpeg, %s, shm wire" % content, (contents.get(content) or {}).get("shmRatioVsFfmpeg"), limit, "×",
                fmt="%.3f")
    parse = _micro(results, "parse 1080p-sized frames")
    add("frame parsing throughput", parse["median"] if parse else None, 2.0, "GB/s", lower_is_better=False)
    scale = results.get("scale") or {}
    per_viewer = scale.get("perViewerCoreFraction")
    add("CPU per extra viewer at 1080p30", per_viewer * 100 if per_viewer is not None else None, 2.0, "% of a core")
    sixteen = next((r for r in scale.get("rows", []) if r["viewers"] == 16), None)
    add("call RSS with 16 viewers", sixteen["callPeakRssMiB"] * 1.048576 if sixteen else None, 100, "MB", fmt="%.1f")
    memory = results.get("memory")
    if memory:
        early, end = memory["early"]["callRssMiB"], memory["end"]["callRssMiB"]
        noise = max(2.0, early * 0.02)
        growth = end - early
        out.append({"name": "call RSS growth, 1 → 10 minutes", "target": "within noise (≤ %.1f MiB)" % noise, "unit": "MiB",
                    "measured": round(growth, 2), "met": growth <= noise,
                    "verdict": ("met: " if growth <= noise else "MISSED: ") + "%+.1f MiB (%.1f → %.1f MiB; fit %+.1f MiB/h)" % (
                        growth, early, end, memory.get("callGrowthMiBPerHour") or 0)})
    else:
        out.append({"name": "call RSS growth, 1 → 10 minutes", "target": "within noise", "unit": "MiB", "measured": None,
                    "met": None, "verdict": "not measured (full run only)"})
    return out


def sfu_fan_out():
    """The SFU fan-out figure from tools/bench-sfu's last run (tools/bench.d/last-sfu-run.json), beside the local one."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "last-sfu-run.json")
    if not os.path.exists(path):
        return []
    with open(path) as source:
        run = json.load(source)
    out = ["### Fan-out through an SFU (Janus)", "",
           "`tools/bench-sfu`: one call publishing a %s test pattern into a real Janus VideoRoom (Debian janus, in a "
           "loopback-only namespace), N light subscribers through Janus (aiortc peers that decrypt SRTP and count RTP "
           "without decoding). Janus fans out; the call sends one stream whatever N is. %s build of the call, load "
           "average %.1f, %s, %.0f s windows." % (run["size"], run["build"].capitalize(), run["loadAverage"], run["date"], run["seconds"]), "",
           "| subscribers through Janus | receiving | call CPU (% of a core) | call RSS / peak (MiB) | call kbps | packets per subscriber (median) |",
           "|---:|---:|---:|---|---:|---:|"]
    for r in run["runs"]:
        out.append("| %d | %d | %.1f | %.1f / %.1f | %.1f | %s |" % (
            r["subscribers"], r["receiving"], r["callCpuPercent"], r["callRssMiB"], r["callPeakMiB"], r["callKbps"],
            r["packetsPerSubscriber"]["median"]))
    first, last = run["runs"][0], run["runs"][-1]
    out += ["", "With %d subscribers through Janus the call's CPU and memory are those of %d: %.1f vs %.1f %% of a core, "
            "%.1f vs %.1f MiB (each local viewer costs about 1.4 %% of a core and 2 MiB, above; the packets each subscriber "
            "counted differ with the test pattern's still and moving moments)." % (
                last["subscribers"], first["subscribers"], last["callCpuPercent"], first["callCpuPercent"], last["callRssMiB"],
                first["callRssMiB"]), ""]
    return out


def _fmt(value, digits=2):
    if value is None:
        return "–"
    if isinstance(value, float):
        return ("%." + str(digits) + "f") % value
    return str(value)


def table(results):
    lines = ["", "screencast benchmarks (%s run, %s s, load %s → %s)" % (
        results["mode"], results.get("durationSeconds"), results.get("loadBefore"), results.get("loadAfter"))]
    if results.get("micro"):
        lines.append("\nMicro-benchmarks (median, min–max over runs)")
        for m in results["micro"]:
            lines.append("  %-58s %10.3f %-9s (%.3f–%.3f, %d runs)" % (m["stage"], m["median"], m["unit"], m["min"], m["max"], m["runs"]))
    for e2e in (results.get("e2e"), results.get("e2eLocal")):
        if not e2e:
            continue
        lat = e2e.get("latencyMs") or {}
        lines.append("\nEnd to end, %s wire, 1080p30 %s, one aiortc viewer, %s s" % (e2e.get("wire", "jpeg"), e2e["content"], e2e["seconds"]))
        lines.append("  capture → RTP-sent: p50 %s ms, p95 %s ms, p99 %s ms, max %s ms over %s frames" % (
            _fmt(lat.get("p50") and lat["p50"] * 1.0), _fmt(lat.get("p95") and lat["p95"] * 1.0),
            _fmt(lat.get("p99") and lat["p99"] * 1.0), _fmt(lat.get("max") and lat["max"] * 1.0), lat.get("count")))
        for name, usage in e2e["processes"].items():
            lines.append("  %-7s CPU %5.1f %% of a core%s, peak RSS %6.1f MiB" % (
                name, usage["cpuPerSecond"] * 100,
                (", %.2f ms per frame" % usage["cpuMsPerFrame"]) if "cpuMsPerFrame" in usage else "", usage["peakRssMiB"]))
        for name, v in (e2e.get("latencyStagesMs") or {}).items():
            lines.append("    %-58s p50 %6.2f  p95 %6.2f  p99 %6.2f ms" % (name, v["p50"], v["p95"], v["p99"]))
        lines.append("  frames %s" % e2e["frames"])
        lines.append("  drops %s" % e2e["drops"])
    compare = results.get("compare")
    if compare:
        lines.append("\nCPU per second of screen time (cores; median of rounds), 1080p30, %d kbps CBR" % compare["bitrateKbps"])
        header = "  %-10s" % "content" + "".join("%12s" % t for t in compare["tools"]) + "   ours/ffmpeg" + (
            "   ours/gst" if "gstreamer" in compare["tools"] else "") + "   i420/ffmpeg" + (
            "    shm/ffmpeg" if "ours-shm" in compare["tools"] else "")
        lines.append(header)
        for content, entry in compare["contents"].items():
            row = "  %-10s" % content + "".join("%12.4f" % entry[t]["cpuPerSecond"] for t in compare["tools"])
            row += "%14s" % _fmt(entry.get("ratioVsFfmpeg"), 3)
            if "gstreamer" in compare["tools"]:
                row += "%11s" % _fmt(entry.get("ratioVsGstreamer"), 3)
            row += "%14s" % _fmt(entry.get("i420RatioVsFfmpeg"), 3)
            if "ours-shm" in compare["tools"]:
                row += "%14s" % _fmt(entry.get("shmRatioVsFfmpeg"), 3)
            lines.append(row)
    scale = results.get("scale")
    if scale:
        lines.append("\nFan-out: the call with N light viewers (%s)" % scale["source"])
        for r in scale["rows"]:
            lines.append("  %2d viewers: call %5.1f %% of a core, %.2f ms/frame, RSS %.1f MiB (peak %.1f), %.1f fps, latency p50 %s ms" % (
                r["viewers"], r["callCpuPerSecond"] * 100, r["callCpuMsPerFrame"], r["callRssMiB"], r["callPeakRssMiB"], r["fps"],
                _fmt(r.get("latencyP50Ms"))))
        lines.append("  per extra viewer: %.2f %% of a core, %.2f MiB RSS (least-squares slopes)" % (
            scale["perViewerCoreFraction"] * 100, scale.get("perViewerRssMiB") or 0))
    for which, name, rows in [("JPEG", n, r) for n, r in (results.get("profile") or {}).items()] + \
            [("I420", n, r) for n, r in (results.get("profileLocal") or {}).items()]:
        if isinstance(rows, list):
            lines.append("\nperf profile of the %s during the end-to-end run, %s wire (top symbols)" % (name, which))
            for r in rows[:12]:
                lines.append("  %5.1f %%  %-28s %s" % (r["percent"], r["dso"][:28], r["symbol"][:90]))
    if results.get("variants"):
        lines.append("\nLatency with other call options (1080p scrolling, one light viewer)")
        for r in results["variants"]:
            lat = r["latencyMs"] or {}
            lines.append("  %-36s round %d: p50 %s p95 %s p99 %s ms, %.1f fps, encode p50 %s ms, call %.1f %%, agent %.1f %%, other %.2f" % (
                r["variant"], r["round"], lat.get("p50"), lat.get("p95"), lat.get("p99"), r["fps"], r["encodeMs"]["p50"],
                r["callCpuPerSecond"] * 100, r["agentCpuPerSecond"] * 100, r["otherCpu"]))
    if results.get("memory"):
        m = results["memory"]
        lines.append("\nMemory: call RSS %.1f MiB at %s s, %.1f MiB at %s s (fit %+.2f MiB/h)" % (
            m["early"]["callRssMiB"], m["early"]["t"], m["end"]["callRssMiB"], m["end"]["t"], m["callGrowthMiBPerHour"] or 0))
    if results.get("g2g"):
        import g2g_report
        lines += g2g_report.table_lines(results["g2g"])
    lines.append("\nTargets")
    for t in results.get("targets", []):
        lines.append("  %-52s %s" % (t["name"], t["verdict"]))
    for error in results.get("errors", []):
        lines.append("ERROR in %s: %s" % (error["phase"], error["error"][:500]))
    return "\n".join(lines)


def _summary(latency):
    if not latency:
        return "–"
    return "p50 %s, p95 %s, p99 %s, max %s ms (%s frames in all)" % (
        latency.get("p50"), latency.get("p95"), latency.get("p99"), latency.get("max"), latency.get("frames"))


def _cmd(argv, replacements=()):
    import re
    text = " ".join(shlex.quote(a) for a in argv)
    for old, new in replacements:
        text = text.replace(old, new)
    return re.sub(r"/tmp/screencast-bench\.[A-Za-z0-9_]+", "$WORK", text)


def markdown(results):
    m = results["machine"]
    out = ["# Benchmarks", "",
           "Regenerated by `tools/bench` (a full run; `tools/bench --quick` for routine use prints the same table "
           "without touching this file). Every number is also in `tools/bench.d/last-full-run.json`; the hand-written "
           "notes at the end come from `tools/bench.d/notes.md` (re-render with "
           "`python3 tools/bench.d/report.py tools/bench.d/last-full-run.json --markdown BENCHMARKS.md`).", "",
           "## Last full run", "",
           "- started %s, took %s s (phases: %s)" % (results["started"], results["durationSeconds"],
                                                     ", ".join("%s %s s" % kv for kv in results.get("phaseSeconds", {}).items())),
           "- load average before %s, after %s (the machine is shared; see notes)" % (results["loadBefore"], results["loadAfter"]),
           "- machine: %s (family %s model %s), %s cores, %s MiB RAM, %s, kernel %s, %s" % (
               m["cpuModel"], m["cpuFamily"], m["cpuModelNumber"], m["cores"], m["memoryMiB"],
               "virtual machine (KVM)" if m["virtualized"] else "bare metal", m["kernel"], m["swift"]),
           "- release build (`swift build -c release`); every figure below is a median over repeated runs with min–max "
           "unless it says otherwise", ""]
    if results.get("errors"):
        out += ["**Errors in this run:**", ""] + ["- %s: `%s`" % (e["phase"], e["error"][:300]) for e in results["errors"]] + [""]

    out += ["## Targets", "", "| target | limit | verdict |", "|---|---|---|"]
    for t in results["targets"]:
        limit = t["target"] if isinstance(t["target"], str) else "%s %s %s" % ("≥" if t["unit"] == "GB/s" else "≤", t["target"], t["unit"])
        out.append("| %s | %s | %s |" % (t["name"], limit, t["verdict"]))
    out.append("")

    if results.get("micro"):
        out += ["## Stages (micro-benchmarks, `screencast-bench`)", "",
                "Single-threaded, one stage at a time; ms per frame unless the unit says otherwise. Contents were "
                "recorded from Xvfb by the agent (`*-1080p`, `*-2160p`); *synthetic* pictures are made in memory.", "",
                "| stage | median | unit | min–max | runs | detail |", "|---|---:|---|---|---:|---|"]
        for s in results["micro"]:
            detail = ", ".join("%s %s" % (k, _fmt(s[k], 2)) for k in
                               ("size", "frames", "p50Ms", "p95Ms", "cpuMsPerContentSecond", "kbps", "encoderRssMiB", "bytes", "meanBytes") if k in s)
            out.append("| %s | %.3f | %s | %.3f–%.3f | %d | %s |" % (s["stage"], s["median"], s["unit"], s["min"], s["max"], s["runs"], detail))
        out.append("")

    for e2e in (results.get("e2e"), results.get("e2eLocal")):
        if not e2e:
            continue
        lat = e2e.get("latencyMs") or {}
        local = e2e.get("wire") == "i420"
        out += ["## End to end at 1080p30, %s" % ("I420 wire (`screencast-agent --format i420`)" if local else "JPEG wire (the default)"), "",
                "Agent and call on a live 1920×1080 Xvfb showing full-screen scrolling text (one line a frame), one aiortc "
                "WHEP viewer decoding on loopback, %s s measured after the viewer's first frames; the agent sends %s." % (
                    e2e["seconds"], "raw I420 planes (no JPEG encode or decode)" if local else "JPEG q80 4:2:0, as iOS senders do"), "",
                "- capture → RTP-sent (from `Buffer-Timestamp` to the send of the frame's last packet, %s frames): "
                "**p50 %s ms, p95 %s ms, p99 %s ms**, max %s ms" % (
                    lat.get("count"), _fmt(lat.get("p50")), _fmt(lat.get("p95")), _fmt(lat.get("p99")), _fmt(lat.get("max"))),
                "- the call's own `/stats` summary (`captureToSentMs`, its last 2048 frames): %s" % _summary(e2e.get("statsLatencyMs")),
                "- per minute of the run (frames, p50 / p99 ms): %s" % ("; ".join(
                    "%d: %d, %.1f / %.1f" % (m["minute"] + 1, m["count"], m["p50"], m["p99"]) for m in e2e["latencyByMinute"])
                    if e2e.get("latencyByMinute") else "–"),
                "- where it goes, per frame (from the call's debug lines, joined on the capture time): %s" % (
                    "; ".join("%s p50 %s / p95 %s / p99 %s ms" % (name, _fmt(v["p50"]), _fmt(v["p95"]), _fmt(v["p99"]))
                              for name, v in (e2e.get("latencyStagesMs") or {}).items()) or "–"),
                "- in-run stage times: agent %s %s ms (mean of its stats lines); call VP8 encode p50 %s ms, p95 %s ms "
                "(its last 128 encodes)" % ("I420 conversion" if local else "JPEG encode", e2e.get("agentJpegMs"), (e2e.get("encodeMs") or {}).get("p50"), (e2e.get("encodeMs") or {}).get("p95")),
                "- encoded %s fps at %s kbps (target %s kbps)" % (e2e["frames"]["encodedFps"], e2e.get("kbps"), e2e.get("bitrateKbps")),
                "", "| process | CPU (% of one core) | CPU ms per frame | peak RSS (MiB) |", "|---|---:|---:|---:|"]
        for name, usage in e2e["processes"].items():
            out.append("| %s | %.1f | %s | %.1f |" % (name, usage["cpuPerSecond"] * 100, _fmt(usage.get("cpuMsPerFrame")), usage["peakRssMiB"]))
        viewer = (e2e.get("viewer") or [{}])[0]
        inbound = viewer.get("inbound") or {}
        drops = e2e["drops"]
        call_drops = ", ".join("%s %d" % (k, v) for k, v in drops["call"].items() if v) or "none"
        out += ["", "Frames in the window: agent captured %s and sent %s; the call received %s and encoded %s "
                "(%s refinements, %s repeats, %s keyframes)." % (
                    e2e["frames"]["agentCaptured"], e2e["frames"]["agentSent"], e2e["frames"]["callReceived"],
                    e2e["frames"]["callEncoded"], e2e["frames"]["refinements"], e2e["frames"]["repeats"], e2e["frames"]["keyframes"]),
                "",
                "Drops and why: agent socket (newest frame wins over a slow reader) %s; call %s (`stale`: a newer frame "
                "replaced it while the encoder was busy, latest frame wins; `unchanged`: byte-identical to the last); peer "
                "%s; the aiortc viewer (whole run) decoded %s frames, RTP packets received %s, lost %s, largest gap "
                "between decoded frames %s ms." % (
                    drops["agentSocket"], call_drops,
                    ", ".join("%s %s" % (k, v) for k, v in drops["peer"].items()), viewer.get("frames"),
                    inbound.get("packetsReceived"), inbound.get("packetsLost"), viewer.get("maxGapMs")),
                "",
                "Machine-wide CPU during the window: %s cores busy, of which %s not explained by the processes above "
                "(the scene's xterm, the bench, anything else)." % (e2e.get("systemCpu"), e2e.get("otherCpu")), ""]

    e2e = results.get("e2e")
    compare = results.get("compare")
    if compare:
        tools = compare["tools"]
        out += ["## CPU against what a user would run instead", "",
                "CPU (user+sys, all threads, from /proc) per second of screen time, in cores, at 1920×1080, %d fps, "
                "%d kbps CBR for every tool; median of %d interleaved round(s) (min–max). Ours is agent + call (one light "
                "viewer attached, its CPU not counted); theirs is the one process. The X server's CPU is listed apart." % (
                    FPS_HINT, compare["bitrateKbps"], results["settings"]["compare_rounds"]), "",
                "| content | " + " | ".join(tools) + " | ours/ffmpeg | " + ("ours/GStreamer | " if "gstreamer" in tools else "")
                + ("ours-i420/ffmpeg | " if "ours-i420" in tools else "") + ("ours-shm/ffmpeg | " if "ours-shm" in tools else "")
                + "fps (%s) | kbps (%s) | Xvfb CPU (%s) |" % ((" / ".join(tools),) * 3),
                "|---|" + "---:|" * (len(tools) + 4 + (1 if "gstreamer" in tools else 0) + (1 if "ours-i420" in tools else 0)
                                     + (1 if "ours-shm" in tools else 0))]
        for content, entry in compare["contents"].items():
            cells = ["%.4f (%.4f–%.4f)" % (entry[t]["cpuPerSecond"], entry[t]["min"], entry[t]["max"]) for t in tools]
            def per_tool(key, digits):
                return " / ".join(_fmt(median([r.get(key) for r in entry["runs"][t]]), digits) for t in tools)
            row = "| %s | %s | **%s** |" % (content, " | ".join(cells), _fmt(entry.get("ratioVsFfmpeg"), 3))
            if "gstreamer" in tools:
                row += " %s |" % _fmt(entry.get("ratioVsGstreamer"), 3)
            if "ours-i420" in tools:
                row += " **%s** |" % _fmt(entry.get("i420RatioVsFfmpeg"), 3)
            if "ours-shm" in tools:
                row += " **%s** |" % _fmt(entry.get("shmRatioVsFfmpeg"), 3)
            out.append(row + " %s | %s | %s |" % (per_tool("fps", 1), per_tool("kbps", 0), per_tool("xvfbCpuPerSecond", 3)))
        out += ["", "CPU busy on the machine outside the measured processes during the windows (the scene's clients, the "
                "bench itself, and anyone else on this shared machine), max over rounds: " + "; ".join(
                    "%s %s" % (content, " / ".join(_fmt(max(r.get("otherCpu", 0) for r in entry["runs"][t]), 2) for t in tools))
                    for content, entry in compare["contents"].items()) + " (%s)." % " / ".join(tools)]
        out += ["", "Ours per content (median of rounds): agent / call CPU, encoded fps, refinements+repeats, capture→sent p50/p99 "
                "from `/stats` (on a still screen those include re-encodes, whose capture time is the re-encode time):", ""]
        for content, entry in [(c, e) for c, e in compare["contents"].items()] + \
                [(c + " (I420 wire)", dict(e, runs={"ours": e["runs"]["ours-i420"]})) for c, e in compare["contents"].items()
                 if "ours-i420" in e.get("runs", {})] + \
                [(c + " (shm wire)", dict(e, runs={"ours": e["runs"]["ours-shm"]})) for c, e in compare["contents"].items()
                 if "ours-shm" in e.get("runs", {})]:
            runs = entry["runs"]["ours"]
            out.append("- %s: agent %.4f, call %.4f cores; %s fps; %s refinements+repeats; latency %s" % (
                content, median([r["agentCpuPerSecond"] for r in runs]), median([r["callCpuPerSecond"] for r in runs]),
                _fmt(median([r["fps"] for r in runs]), 1), sum(r["refinements"] + r["repeats"] for r in runs),
                "; ".join("p50 %s / p99 %s ms" % (_fmt((r["latencyMs"] or {}).get("p50")), _fmt((r["latencyMs"] or {}).get("p99")))
                          for r in runs)))
        out.append("")

    scale = results.get("scale")
    if scale:
        out += ["## Fan-out", "",
                "Agent and call on a live 1080p Xvfb showing scrolling text, with N light viewers: `screencast-bench viewers`, "
                "which completes ICE and DTLS and drops the SRTP undecrypted (16 aiortc viewers, each decoding 1080p, cannot "
                "run on 2 cores). Only the call's CPU and memory are counted.", "",
                "| viewers | call CPU (% of a core) | ms per frame | RSS / peak (MiB) | fps | capture→sent p50 (ms) | viewers' own CPU |",
                "|---:|---:|---:|---|---:|---:|---:|"]
        for r in scale["rows"]:
            out.append("| %d | %.1f | %.2f | %.1f / %.1f | %.1f | %s | %s |" % (
                r["viewers"], r["callCpuPerSecond"] * 100, r["callCpuMsPerFrame"], r["callRssMiB"], r["callPeakRssMiB"], r["fps"],
                _fmt(r.get("latencyP50Ms")), _fmt(r["viewersCpuPerSecond"] * 100 if r.get("viewersCpuPerSecond") is not None else None, 1)))
        out += ["", "Cost per extra viewer (least-squares slopes over the rows): **%.2f %% of one core** and %.2f MiB of RSS." % (
            scale["perViewerCoreFraction"] * 100, scale.get("perViewerRssMiB") or 0), ""]
    out += sfu_fan_out()

    memory = results.get("memory")
    if memory:
        out += ["## Memory over 10 minutes", "",
                "During the end-to-end run: call RSS %.1f MiB at %s s, %.1f MiB at %s s (least-squares %+.2f MiB/hour from "
                "minute 1 on); agent %.1f → %.1f MiB (%+.2f MiB/hour)." % (
                    memory["early"]["callRssMiB"], memory["early"]["t"], memory["end"]["callRssMiB"], memory["end"]["t"],
                    memory["callGrowthMiBPerHour"] or 0, memory["early"]["agentRssMiB"], memory["end"]["agentRssMiB"],
                    memory["agentGrowthMiBPerHour"] or 0), ""]

    prof = [("%s, JPEG wire" % n, r) for n, r in (results.get("profile") or {}).items()] + \
        [("%s, I420 wire" % n, r) for n, r in (results.get("profileLocal") or {}).items()]
    if prof:
        out += ["## Profiles", "",
                "`perf record -F 499 -p PID` (cpu-clock samples) of the call and the agent for %s s right after each "
                "end-to-end window, same load; self time by shared object and symbol (Swift names demangled), "
                "entries of 1 %% and more:" % results["settings"].get("profile_seconds"), ""]
        for name, rows in prof:
            if not isinstance(rows, list):
                out += ["- %s: %s" % (name, rows), ""]
                continue
            out += ["### %s" % name, "", "| self % | object | symbol |", "|---:|---|---|"]
            for r in rows:
                out.append("| %.1f | %s | `%s` |" % (r["percent"], r["dso"], r["symbol"].replace("|", "\\|")))
            out.append("")

    out += ["## Exact commands", "", "```sh", "tools/bench            # full run: this file, and --json FILE for the numbers",
            "tools/bench --quick    # under 3 minutes; prints the table only", "```", "",
            "Inside it (DISPLAY, ports and paths are the run's own; everything in one `unshare -n` namespace with only "
            "loopback up):", "", "```sh",
            "# contents: Xvfb -displayfd 3 -screen 0 1920x1080x24 -nolisten tcp -noreset, then the xterm/xdotool clients of "
            "tools/bench.d/xscene.py",
            "# micro-benchmarks",
            ".build/release/screencast-bench --json --repeat %s --stage parse-1080p --stage parse-tiny --stage jpeg-encode "
            "--stage rotation --stage range --stage vp8-unchanged" % results["settings"]["repeat"],
            ".build/release/screencast-agent --display :N --output CONTENT-1080p.frames --fps 30 --duration %s --stats-interval 0 "
            "--log-level warn" % results["settings"]["record_seconds"],
            ".build/release/screencast-bench --json --stage shm-capture --display :N --repeat %s" % results["settings"]["repeat"],
            ".build/release/screencast-bench --json --stage jpeg-decode --stage vp8 --repeat %s --max-frames %s "
            "--content static-1080p=static-1080p.frames …" % (results["settings"]["repeat"], results["settings"]["max_frames"]),
            "# end to end, comparison, fan-out"]
    if e2e:
        for name in ("call", "agent", "viewer"):
            out.append(_cmd(e2e["commands"][name], [(os.getcwd() + "/", "")]))
    if results.get("e2eLocal"):
        out.append(_cmd(results["e2eLocal"]["commands"]["agent"], [(os.getcwd() + "/", "")]))
    if compare:
        for name in ("viewers", "ffmpeg", "gstreamer"):
            if name in compare["commands"]:
                out.append(_cmd(compare["commands"][name], [(os.getcwd() + "/", "")]))
    if scale:
        out.append(_cmd(scale["command"], [(os.getcwd() + "/", "")]))
    out += ["```", ""]
    out += network_markdown(results.get("network"))
    import g2g_report
    out += g2g_report.last_run_lines()
    if os.path.exists(FUZZING):
        with open(FUZZING) as f:
            out.append(f.read().rstrip() + "\n")
    if os.path.exists(NOTES):
        with open(NOTES) as f:
            out.append(f.read().rstrip() + "\n")
    return "\n".join(out)


FPS_HINT = 30


def network_markdown(network):
    """The network phase: the step-profile plot and how long adaptation took."""
    if not network:
        return []
    out = ["## Congestion control: the step profile", "",
           "Sender-side GCC (`CongestionControl`) in the in-memory simulator (`screencast-bench gcc-sim --profile steps`: "
           "1 Mbit/s, 300 kbit/s from 20 s, 3 Mbit/s from 40 s; drop-tail queue, 25 ms one way, TWCC every 100 ms); "
           "target and received rate per second:", "",
           "![GCC step profile](%s)" % os.path.basename(network["png"]), ""]
    for step in network["steps"]:
        took = "never" if step["seconds"] is None else "%g s" % step["seconds"]
        out.append("- %g → %g kbit/s at %g s: %s (%s)" % (step["fromKbps"], step["toKbps"], step["atSecond"], took, step["goal"]))
    return out + [""]


if __name__ == "__main__":
    # Re-renders a saved run: python3 tools/bench.d/report.py RESULT.json [--markdown OUT.md]
    import json
    import sys
    with open(sys.argv[1]) as f:
        saved = json.load(f)
    saved["targets"] = targets(saved)
    if "--markdown" in sys.argv:
        with open(sys.argv[sys.argv.index("--markdown") + 1], "w") as f:
            f.write(markdown(saved))
    else:
        print(table(saved))
