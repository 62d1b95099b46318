"""X servers and the four screen contents the benchmarks use (tools/bench).

Each scene is made of real X clients (xterm, xdotool) on a private Xvfb that picks its own display
number (-displayfd), without a window manager, so windows appear exactly where asked:

  static     two idle xterms with text on a plain background; nothing changes
  typing     a terminal into which text is typed at about 8 characters a second (a program in the
             xterm prints the characters one at a time, as an echoing shell would)
  scrolling  a full-screen xterm printing a line every 33 ms: the whole screen scrolls by one text line a
             frame, continuously (scrolling-fast: every 10 ms, several lines a frame)
  drag       an xterm window dragged back and forth across the screen, 30 moves a second, with the
             pointer following it

Scenes run until stopped (they loop), so any tool can watch the same content for as long as it needs.
"""

import os
import subprocess
import time

SCENES = ["static", "typing", "scrolling", "drag"]
# Only for the VP8 micro-benchmark: the scroll three times as fast (100 lines a second, several lines per frame).
EXTRA_SCENES = ["scrolling-fast"]

TYPING_TEXT = (
    "The quick brown fox jumps over the lazy dog. Sphinx of black quartz, judge my vow. "
    "Pack my box with five dozen liquor jugs. How vexingly quick daft zebras jump! "
)

TYPER = r"""
import sys, time
text = sys.argv[1]
column = 0
while True:
    for ch in text:
        sys.stdout.write(ch); sys.stdout.flush()
        column += 1
        if column >= 90 and ch == " ":
            sys.stdout.write("\n$ "); sys.stdout.flush(); column = 0
        time.sleep(0.12)
"""

SCROLLER = r"""
import sys, time
i = 0
words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore".split()
next_at = time.monotonic()
while True:
    i += 1
    line = "%07d  " % i + " ".join(words[(i * 7 + k) % len(words)] for k in range(24)) + "  %d" % (i * 7919 % 100000)
    sys.stdout.write(line + "\n"); sys.stdout.flush()
    next_at += float(sys.argv[1])
    delay = next_at - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    else:
        next_at = time.monotonic()
"""

STATIC_TEXT = r"""
import sys, time
sys.stdout.write(sys.argv[1].replace("\\n", "\n")); sys.stdout.flush()
time.sleep(100000)
"""


class Xvfb:
    """A private Xvfb of the given size (24-bit), stopped by stop()."""

    def __init__(self, width, height):
        self.width, self.height = width, height
        read_fd, write_fd = os.pipe()
        self.process = subprocess.Popen(
            ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "%dx%dx24" % (width, height), "-nolisten", "tcp", "-noreset"],
            pass_fds=[write_fd], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(write_fd)
        number = b""
        deadline = time.monotonic() + 10
        while not number.endswith(b"\n") and time.monotonic() < deadline:
            chunk = os.read(read_fd, 16)
            if not chunk:
                break
            number += chunk
        os.close(read_fd)
        if not number.strip():
            self.stop()
            raise RuntimeError("Xvfb did not start")
        self.display = ":" + number.decode().strip()
        self.env = dict(os.environ, DISPLAY=self.display)
        subprocess.run(["xsetroot", "-solid", "#3b6e8f"], env=self.env, check=True)

    @property
    def pid(self):
        return self.process.pid

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Scene:
    """One of SCENES running on an Xvfb until stop()."""

    def __init__(self, xvfb, name):
        if name not in SCENES + EXTRA_SCENES:
            raise ValueError("unknown scene " + name)
        self.xvfb, self.name = xvfb, name
        self.processes = []
        big = xvfb.height > 1500
        self.font = "10x20" if big else "9x15"
        self.cell = (10, 20) if big else (9, 15)
        subprocess.run(["xdotool", "mousemove", str(xvfb.width - 40), str(xvfb.height - 40)], env=xvfb.env, check=False)
        getattr(self, "_start_" + name.replace("-", "_"))()

    def _xterm(self, geometry, title, script, *args):
        process = subprocess.Popen(
            ["xterm", "-geometry", geometry, "-title", title, "-fa", "", "-fn", self.font, "-bg", "#fdf6e3", "-fg", "#222222",
             "-e", "python3", "-u", "-c", script, *args],
            env=self.xvfb.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.processes.append(process)
        found = subprocess.run(["xdotool", "search", "--sync", "--name", "^%s$" % title], env=self.xvfb.env,
                               capture_output=True, text=True, timeout=15)
        return found.stdout.split()[0] if found.stdout.split() else None

    def _static_windows(self):
        notes = "screencast benchmark: a static desktop\\n\\n" + "".join(
            "  line %d: Sphinx of black quartz, judge my vow. Pack my box with five dozen liquor jugs.\\n" % i for i in range(1, 25))
        self._xterm("100x30+60+60", "notes", STATIC_TEXT, notes)
        self._xterm("60x12+%d+%d" % (self.xvfb.width // 2 + 100, self.xvfb.height // 2 + 80), "clock", STATIC_TEXT,
                    "nothing moves here\\n")

    def _start_static(self):
        self._static_windows()
        time.sleep(0.5)

    def _start_typing(self):
        self._xterm("60x12+%d+%d" % (self.xvfb.width // 2 + 100, self.xvfb.height // 2 + 80), "clock", STATIC_TEXT,
                    "nothing moves here\\n")
        self._xterm("100x30+60+60", "editor", TYPER, TYPING_TEXT)
        time.sleep(0.5)

    def _start_scrolling(self, interval="0.033"):
        columns = self.xvfb.width // self.cell[0] - 1
        rows = self.xvfb.height // self.cell[1] - 1
        self._xterm("%dx%d+0+0" % (columns, rows), "scroller", SCROLLER, interval)
        time.sleep(0.5)

    def _start_scrolling_fast(self):
        self._start_scrolling("0.01")

    def _start_drag(self):
        self._static_windows()
        window = self._xterm("80x24+40+40", "dragged", STATIC_TEXT,
                             "drag me\\n\\n" + "".join("  row %d of a window being dragged\\n" % i for i in range(1, 20)))
        # One xdotool process runs a long chain of moves (no process per step): 30 moves a second along a
        # back-and-forth path, the pointer holding the title area. Restarted when the chain ends.
        steps = []
        span_x, span_y = self.xvfb.width - 900, self.xvfb.height - 500
        for step in range(0, 1800):
            phase = step % 240
            t = phase / 120 if phase < 120 else 2 - phase / 120
            x, y = 40 + int(span_x * t), 40 + int(span_y * t * 0.5)
            steps += ["windowmove", window, str(x), str(y), "mousemove", str(x + 60), str(y + 8), "sleep", "0.033"]
        command = ["sh", "-c", 'while :; do "$@" || exit; done', "drag", "xdotool"] + steps
        self.processes.append(subprocess.Popen(command, env=self.xvfb.env,
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(0.5)

    def stop(self):
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
        self.processes = []
