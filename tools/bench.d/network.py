"""The network phase of tools/bench: sender-side GCC under the step profile (1 Mbit/s, 300 kbit/s from 20 s,
3 Mbit/s from 40 s) in the in-memory simulator (`screencast-bench gcc-sim --profile steps`), the target and the
received rate per second plotted to a PNG beside BENCHMARKS.md, and how long adaptation took.

Run alone: python3 tools/bench.d/network.py BENCH_BINARY PNG_PATH (prints the JSON summary).
"""

import csv
import io
import json
import subprocess
import sys


def parse(text):
    rows = list(csv.DictReader(io.StringIO(text)))
    return [{k: (v if k == "usage" else float(v)) for k, v in row.items()} for row in rows]


def adaptation(rows):
    """Seconds from each capacity step until the target is within the new capacity (down) or reaches
    70 % of it (up, capped at the sender's 3 Mbit/s wish); None when it never did."""
    steps = []
    for previous, row in zip(rows, rows[1:]):
        if row["capacity_kbps"] != previous["capacity_kbps"]:
            steps.append((row["second"], previous["capacity_kbps"], row["capacity_kbps"]))
    out = []
    for at, old, new in steps:
        goal = (lambda r: r["target_kbps"] <= new) if new < old else (lambda r: r["target_kbps"] >= 0.7 * new)
        reached = next((r["second"] - at for r in rows if r["second"] >= at and goal(r)), None)
        out.append({"atSecond": at, "fromKbps": old, "toKbps": new, "seconds": reached,
                    "goal": "target <= capacity" if new < old else "target >= 70 % of capacity"})
    return out


def plot(rows, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    seconds = [r["second"] for r in rows]
    fig, ax = plt.subplots(figsize=(9, 4.5), dpi=110)
    ax.step(seconds, [r["capacity_kbps"] for r in rows], where="post", color="0.6", label="link capacity")
    ax.plot(seconds, [r["target_kbps"] for r in rows], label="GCC target", linewidth=2)
    ax.plot(seconds, [r["delivered_kbps"] for r in rows], label="received rate", linestyle="--")
    ax.set_xlabel("seconds")
    ax.set_ylabel("kbit/s")
    ax.set_title("Sender-side GCC, step profile (simulated link, 25 ms one way, TWCC every 100 ms)")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)


def phase(bench, png):
    result = subprocess.run([bench, "gcc-sim", "--profile", "steps"], capture_output=True, text=True, timeout=300, check=True)
    rows = parse(result.stdout)
    plot(rows, png)
    return {"png": png, "steps": adaptation(rows), "seconds": len(rows),
            "rows": [[r["second"], r["capacity_kbps"], r["target_kbps"], r["delivered_kbps"]] for r in rows]}


if __name__ == "__main__":
    print(json.dumps({k: v for k, v in phase(sys.argv[1], sys.argv[2]).items() if k != "rows"}, indent=1))
