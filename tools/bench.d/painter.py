#!/usr/bin/python3
"""The painter of the glass-to-glass benchmark: an X client showing the wall-clock time as glasscode's
cells, repainted every --interval-ms (tools/bench --phases g2g). Debian's python3 with python3-xlib.

  painter.py --display :N [--x X] [--y Y] [--interval-ms 4] [--seconds S]

Draws each code into a pixmap (white quiet zone, then the black cells in one PolyFillRectangle) and copies
it to its window in one CopyArea, so a capture never sees half of a repaint; then waits for the server's
reply to a round trip (XSync) before the next. The time painted is CLOCK_REALTIME in ms, read just before
the drawing: a reading from the screen is never later than the moment the code became visible, so the
latency measured from it is never too short. Until SIGTERM (or --seconds), then prints one JSON line:
{"paints", "seconds", "intervalMs": p50 of the time between paints, "lagMs": {"p50", "p99", "max"}: painted
time → the server confirmed the repaint}. Exits 2 (message on stderr) when the display cannot be opened.
"""

import argparse
import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import glasscode  # noqa: E402

from Xlib import X, display as xdisplay, error as xerror  # noqa: E402


def percentile(ordered, p):
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))] if ordered else None


class Painter:
    def __init__(self, name, x, y):
        self.display = xdisplay.Display(name)
        # Chromium's window list (its screen-share picker, also when auto-selecting) asks each window for
        # WM_STATE by an atom looked up with only_if_exists; without a window manager the atom does not exist,
        # the lookup gives None, and its GetProperty(None) is a BadAtom that ends the browser. Interned here, the
        # atom lives as long as the server (Xvfb -noreset).
        self.display.intern_atom("WM_STATE")
        screen = self.display.screen()
        width, height = glasscode.WINDOW_WIDTH, glasscode.WINDOW_HEIGHT
        self.window = screen.root.create_window(
            x, y, width, height, 0, screen.root_depth, X.InputOutput, X.CopyFromParent,
            background_pixel=screen.white_pixel, override_redirect=True)
        self.pixmap = self.window.create_pixmap(width, height, screen.root_depth)
        self.white = self.pixmap.create_gc(foreground=screen.white_pixel)
        self.black = self.pixmap.create_gc(foreground=screen.black_pixel)
        self.copy = self.window.create_gc()
        self.size = (width, height)
        self.window.map()
        self.display.sync()

    def paint(self, ms):
        width, height = self.size
        self.pixmap.fill_rectangle(self.white, 0, 0, width, height)
        cells = [glasscode.cell_rect(i) for i, bit in enumerate(glasscode.encode(ms)) if bit]
        if cells:
            self.pixmap.poly_fill_rectangle(self.black, cells)
        self.window.copy_area(self.copy, self.pixmap, 0, 0, width, height, 0, 0)
        self.display.sync()


def screen_lumas(display, x, y):
    """The 48 cells' mean luma (BT.601 weights) of the inner half of each cell, read from the root window at
    the painter's place (x, y): what the benchmark's reader does with a video frame, here on the screen."""
    width, height = glasscode.WINDOW_WIDTH, glasscode.WINDOW_HEIGHT
    image = display.screen().root.get_image(x, y, width, height, X.ZPixmap, 0xFFFFFFFF)
    data = image.data  # 32 bits a pixel, B G R X, rows of width * 4 bytes
    lumas = []
    for index in range(glasscode.BITS):
        cx, cy, cw, ch = glasscode.cell_rect(index)
        total = count = 0
        for row in range(cy + ch // 4, cy + ch - ch // 4):
            for column in range(cx + cw // 4, cx + cw - cw // 4):
                b, g, r = data[(row * width + column) * 4:(row * width + column) * 4 + 3]
                total += 0.299 * r + 0.587 * g + 0.114 * b
                count += 1
        lumas.append(round(total / count))
    return lumas


def self_check():
    """Paints on a private Xvfb and reads the screen back: every reading decodes to a time painted between
    the painter's start and the reading, and the code moves on. Returns the number of readings checked."""
    import subprocess
    import xscene
    xvfb = xscene.Xvfb(640, 480)
    painter = None
    try:
        started = time.time_ns() // 1_000_000
        painter = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--display", xvfb.display, "--x", "100",
                                    "--y", "50", "--interval-ms", "4"], stdout=subprocess.PIPE)
        reader = xdisplay.Display(xvfb.display)
        values, refused = [], 0
        deadline = time.monotonic() + 10
        while len(values) < 50 and time.monotonic() < deadline:
            lumas = screen_lumas(reader, 100, 50)
            read_at = time.time_ns() // 1_000_000
            try:
                value = glasscode.decode(lumas, read_at)
            except glasscode.Unreadable:
                refused += 1  # before the first paint: the root's background
                time.sleep(0.01)
                continue
            assert started <= value <= read_at, (started, value, read_at)
            values.append(value)
            time.sleep(0.01)
        assert len(values) == 50, "only %d readings decoded (%d refused)" % (len(values), refused)
        assert len(set(values)) >= 25, "the code hardly moved: %d distinct values" % len(set(values))
        painter.terminate()
        report = json.loads(painter.communicate(timeout=10)[0].decode().strip().splitlines()[-1])
        assert report["paints"] > 100 and report["lagMs"]["p50"] < 50, report
        return len(values)
    finally:
        if painter and painter.poll() is None:
            painter.kill()
            painter.wait()
        xvfb.stop()


def main():
    if sys.argv[1:] == ["--self-check"]:
        print("painter: %d screen readings decoded" % self_check())
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--display", required=True)
    parser.add_argument("--x", type=int, default=0)
    parser.add_argument("--y", type=int, default=0)
    parser.add_argument("--interval-ms", type=float, default=4.0)
    parser.add_argument("--seconds", type=float, default=None)
    args = parser.parse_args()
    try:
        painter = Painter(args.display, args.x, args.y)
    except (xerror.DisplayError, xerror.DisplayConnectionError, OSError) as failure:
        sys.stderr.write("painter: cannot open display %s: %s\n" % (args.display, failure))
        return 2
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    signal.signal(signal.SIGINT, lambda *_: stop.append(True))
    started = time.monotonic()
    deadline = started + args.seconds if args.seconds else None
    interval = args.interval_ms / 1000
    lags, gaps = [], []
    last = None
    next_at = time.monotonic()
    while not stop and (deadline is None or time.monotonic() < deadline):
        ms = time.time_ns() // 1_000_000
        painter.paint(ms)
        done = time.time_ns() / 1e6
        lags.append(done - ms)
        if last is not None:
            gaps.append((ms - last))
        last = ms
        next_at += interval
        delay = next_at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        else:
            next_at = time.monotonic()
    lags.sort()
    gaps.sort()
    print(json.dumps({"paints": len(lags), "seconds": round(time.monotonic() - started, 2),
                      "intervalMs": percentile(gaps, 0.5),
                      "lagMs": {"p50": round(percentile(lags, 0.5), 3), "p99": round(percentile(lags, 0.99), 3),
                                "max": round(lags[-1], 3)} if lags else None}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
