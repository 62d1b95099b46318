"""The glass-to-glass results (g2g.py) as text for the terminal and as the "## Glass to glass (issue 15)"
section of BENCHMARKS.md. The last non-quick run is kept in tools/bench.d/last-g2g-run.json; report.py
renders the section from it in a full re-render, and `tools/bench --phases g2g` replaces the section in
place (or inserts it before "## Latency (issue 15)")."""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
LAST_RUN = os.path.join(HERE, "last-g2g-run.json")
HEADING = "## Glass to glass (issue 15)"
LABELS = {"ours-jpeg": "ours, %d fps (JPEG wire, the default)", "ours-shm": "ours, %d fps (`--format shm`, the local fast path)",
          "ours-i420": "ours, %d fps (`--format i420`)",
          "chrome": "Chrome's own `getDisplayMedia` → VP8 → loopback peer, %d fps"}


def _ms(value):
    return "–" if value is None else "%.1f ms" % value


def _p(row, key, which="p50"):
    return _ms((row.get(key) or {}).get(which))


def _validity(row):
    text = "%d of %d" % (row["valid"], row["frames"])
    if row["invalid"]:
        text += " (" + ", ".join("%s %d" % kv for kv in sorted(row["invalid"].items())) + ")"
    return text


def _usable(row):
    return row["usableRuns"] > 0 and row.get("g2g")


def table_lines(g2g):
    lines = ["", "Glass to glass, %s, %d run(s) per row, %g s windows (load %s → %s)" % (
        g2g["settings"]["size"], g2g["settings"]["runs"], g2g["settings"]["window"], g2g["loadBefore"], g2g["loadAfter"])]
    for row in g2g["rows"]:
        label = "%-10s %d fps" % (row["config"], row["fps"])
        if not _usable(row):
            lines.append("  %s: too few valid frames (%s valid; a run needs %d)%s" % (
                label, _validity(row), g2g["settings"]["minValidFrames"], "; " + row["errors"][0][:200] if row["errors"] else ""))
            continue
        g = row["g2g"]
        lines.append("  %s: g2g p50 %s p90 %s p99 %s | painted→received %s | received→shown %s | jitter buffer %s | "
                     "valid %s | ratio to Chrome %s (send side %s)" % (
                         label, _ms(g["p50"]), _ms(g["p90"]), _ms(g["p99"]), _p(row, "paintedToReceived"), _p(row, "receivedToShown"),
                         _ms(row["jitterBufferMs"]), _validity(row), row.get("g2gRatio") or "–", row.get("paintedToReceivedRatio") or "–"))
    return lines


def markdown_lines(g2g, command="tools/bench --phases g2g"):
    s = g2g["settings"]
    loads = [r["load"][0] for r in g2g["runs"]]
    cores = os.cpu_count() or 1
    out = [HEADING, "",
           "`%s`, %s: release build, %s Xvfb (a 160×60 xterm running `top -d 0.5`, beside it the painter: "
           "`tools/bench.d/painter.py` shows CLOCK_REALTIME in ms as 48 cells of 24 px — 40 bits of time and a CRC-8 — "
           "repainted every %g ms), headless Chromium 156 reading every presented frame with "
           "`requestVideoFrameCallback` (`tools/bench.d/g2g_reader.js`). %d interleaved round(s), each visiting every "
           "row, %g s windows after %g s of playing. One-minute load average during the run %.1f–%.1f (before %.1f, "
           "after %.1f) on %d cores." % (command, g2g["date"], s["size"], s["paintIntervalMs"], s["runs"], s["window"],
                                         s["warm"], min(loads), max(loads), g2g["loadBefore"][0], g2g["loadAfter"][0], cores), ""]
    nice = s.get("niceness") or 0
    # The load during the run is mostly the bench's own (Chromium, Xvfb, the painter, agent and call): what says
    # whether others shared the machine is the load before it.
    shared = g2g["loadBefore"][0] > 0.5 * cores
    if shared or nice:
        out += ["**Taken on a shared, loaded machine** (other work ran alongside%s%s): the absolute "
                "figures are above a quiet machine's. The rows were measured interleaved, so the ratios to Chrome carry "
                "better than the milliseconds." % (", load %.1f before the run" % g2g["loadBefore"][0] if shared else "",
                                                  ", and every process of the bench ran at nice %d" % nice if nice else ""), ""]
    else:
        out += ["**On an otherwise idle machine** (load %.1f before the run; the load during it is the bench's own)."
                % g2g["loadBefore"][0], ""]
    out += ["g2g = `expectedDisplayTime` − painted time; painted → received = `receiveTime` (last packet of the frame) "
            "− painted; received → shown = `expectedDisplayTime` − `receiveTime`; jitter buffer = inbound-rtp "
            "`jitterBufferDelay / jitterBufferEmittedCount`. Percentiles pool every valid frame of the row's usable runs; "
            "the ratios are p50 over Chrome's p50 at the same frame rate (send side: painted → received). A frame whose "
            "code fails the check (a cell neither black nor white, the CRC, or a time over a minute from the reader's "
            "clock) is invalid and counted; a run with fewer than %d valid frames or over %d %% invalid is left out, and a "
            "row without a usable run says so." % (s["minValidFrames"], round(s["maxInvalidShare"] * 100)), "",
            "| | p50 g2g | p90 | p99 | p50 of each run | painted → received | received → shown | jitter buffer | "
            "frames shown a second | kbps | valid frames | g2g vs Chrome | send side vs Chrome |",
            "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|---:|---:|"]
    for row in g2g["rows"]:
        label = LABELS[row["config"]] % row["fps"]
        if not _usable(row):
            out.append("| %s | too few valid frames | | | | | | | | | %s | | |" % (label, _validity(row)))
            continue
        g = row["g2g"]
        usable = [r for r in g2g["runs"] if r["config"] == row["config"] and r["fps"] == row["fps"] and r["analysis"]["usable"]]
        shown = sum(r["analysis"]["valid"] for r in usable) / (len(usable) * s["window"])
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %.1f | %s | %s | %s | %s |" % (
            label, _ms(g["p50"]), _ms(g["p90"]), _ms(g["p99"]), " / ".join("%.0f" % v for v in row["runP50s"] if v is not None),
            _p(row, "paintedToReceived"), _p(row, "receivedToShown"), _ms(row["jitterBufferMs"]), shown,
            "–" if row["kbps"] is None else "%.0f" % row["kbps"], _validity(row),
            "%.2f×" % row["g2gRatio"] if row.get("g2gRatio") else "–",
            "%.2f×" % row["paintedToReceivedRatio"] if row.get("paintedToReceivedRatio") else "–"))
    split = [row for row in g2g["rows"] if _usable(row) and row.get("paintedToCaptured")]
    if split:
        out += ["", "Where the time goes, p50 of each stage (ms). Ours: each presented frame joined by its RTP timestamp "
                "with the call's `frame sent` debug line (the agent's capture time and the moment the frame's last packet "
                "left; `tools/bench.d/g2g_split.py`). Chrome: Chromium's `captureTime` estimate of its own capture. Each "
                "stage's p50 is taken on its own, so the stages need not add up to the g2g p50.", "",
                "CPU: cores over the reader's window (median of the row's runs), the agent, the call and the browser's "
                "whole process tree (for Chrome's row it captures, encodes, decodes and shows; for ours it decodes and "
                "shows); per frame shown: all cores × 1000 / frames shown a second.", "",
                "| | painted → captured | captured → sent | sent → received | captured → received | received → shown | "
                "frames joined | CPU: agent + call + browser = all | CPU ms a frame shown |", "|---|---:|---:|---:|---:|---:|---:|---|---:|"]
        for row in split:
            runs = [r for r in g2g["runs"] if r["config"] == row["config"] and r["fps"] == row["fps"] and r["analysis"]["usable"]]
            shares = [r["analysis"].get("joinedShare") for r in runs if r["analysis"].get("joinedShare")]
            cpu = row.get("cpu")
            shown = sum(r["analysis"]["valid"] for r in runs) / (len(runs) * s["window"]) if runs else 0
            out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                LABELS[row["config"]] % row["fps"], _p(row, "paintedToCaptured"), _p(row, "capturedToSent"),
                _p(row, "sentToReceived"), _p(row, "capturedToReceived"), _p(row, "receivedToShown"),
                "%.0f %%" % (100 * sum(shares) / len(shares)) if shares else "–",
                ("%.2f + %.2f + %.2f = %.2f" % (cpu["agent"], cpu["call"], cpu["browser"], sum(cpu.values())) if
                 row["config"] != "chrome" else "%.2f" % cpu["browser"]) if cpu else "–",
                "%.0f" % (sum(cpu.values()) * 1000 / shown) if cpu and shown else "–"))
    errors = [(r["config"], r["fps"], e) for r in g2g["rows"] for e in r["errors"]]
    if errors:
        out += ["", "Failed runs: " + "; ".join("%s %d fps: `%s`" % (c, f, e[:160].replace("`", "'")) for c, f, e in errors) + "."]
    painter = g2g.get("painter") or {}
    if painter.get("lagMs"):
        out += ["", "The painter repainted %d times in %.0f s (p50 every %s ms); painted → the X server confirmed the "
                "repaint: p50 %.1f ms, p99 %.1f ms (the time in the code is read before drawing, so a g2g figure is "
                "never too short)." % (painter["paints"], painter["seconds"], painter["intervalMs"], painter["lagMs"]["p50"],
                                       painter["lagMs"]["p99"])]
    return out + [""]


def save(g2g):
    with open(LAST_RUN, "w") as f:
        json.dump(g2g, f, indent=1)


def last_run_lines():
    """The section from the last saved run, for report.markdown(); none when there is none."""
    if not os.path.exists(LAST_RUN):
        return []
    with open(LAST_RUN) as f:
        run = json.load(f)
    return markdown_lines(run, run.get("command", "tools/bench --phases g2g"))


def splice(path, lines):
    """Replaces the section in the markdown file at `path` (up to the next "## " heading), or inserts it
    before "## Latency (issue 15)", or appends it."""
    with open(path) as f:
        text = f.read().split("\n")
    section = lines if lines[-1] == "" else lines + [""]
    if HEADING in text:
        start = text.index(HEADING)
        end = next((i for i in range(start + 1, len(text)) if text[i].startswith("## ")), len(text))
        text[start:end] = section
    elif "## Latency (issue 15)" in text:
        at = text.index("## Latency (issue 15)")
        text[at:at] = section
    else:
        text += [""] + section
    with open(path, "w") as f:
        f.write("\n".join(text))
