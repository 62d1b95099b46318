#!/usr/bin/python3
"""Headless Chromium opens the viewer page and checks that the shared screen is visible.

Used by `tools/demo --check` (inside a loopback-only network namespace). Exit 0 when the page's <video>
has the screen's size, has decoded enough frames, and the colour read from it (16x16 patches of the
background at the picture's four corners) comes within COLOUR_TOLERANCE (4) levels, in every channel, of
the colour painted on the shared screen before the timeout; 1 otherwise. Saves a screenshot of the page
either way. Says how long after the page started (its performance.now()) the first picture showed (polled
every 50 ms), --min-frames were decoded and the colours settled.

Usage: demo_check.py URL WIDTHxHEIGHT R,G,B SCREENSHOT [--timeout S]
Needs Debian's python3-selenium and chromium-driver (tools/setup installs them); run with /usr/bin/python3.
"""
import argparse
import os
import shutil
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

# Levels (0-255) a channel of the background may differ from the screen's: a share that gets the YCbCr range
# wrong (full-range samples shown as BT.601 limited range, issue 10) shows #1e90ff 11 levels off in red.
COLOUR_TOLERANCE = 4

# Reads the video: its size, frames decoded (getStats through the page's peer connection if exposed,
# else the media element's own counter), and the average colour of a 16x16 patch at (x, y) of the video.
PROBE = """
const [x, y] = arguments;
const video = document.querySelector('video');
if (!video || !video.videoWidth) return null;
const canvas = document.createElement('canvas');
canvas.width = video.videoWidth; canvas.height = video.videoHeight;
const ctx = canvas.getContext('2d');
ctx.drawImage(video, 0, 0);
const data = ctx.getImageData(x, y, 16, 16).data;
let r = 0, g = 0, b = 0;
for (let i = 0; i < data.length; i += 4) { r += data[i]; g += data[i + 1]; b += data[i + 2]; }
const n = data.length / 4;
const quality = video.getVideoPlaybackQuality ? video.getVideoPlaybackQuality() : {};
return {width: video.videoWidth, height: video.videoHeight,
        frames: quality.totalVideoFrames || 0, rgb: [r / n, g / n, b / n], ms: performance.now()};
"""

# Cheap, for polling often until the first picture: whether the video has one, and the page's clock (ms since
# the page started loading).
FIRST_PICTURE = """
const video = document.querySelector('video');
return {shown: !!(video && video.videoWidth), ms: performance.now()};
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("url")
    parser.add_argument("size", help="expected video size, WxH")
    parser.add_argument("rgb", help="colour painted on the screen's background, R,G,B")
    parser.add_argument("screenshot", help="where to save the page screenshot (PNG)")
    parser.add_argument("--timeout", type=float, default=45)
    parser.add_argument("--min-frames", type=int, default=60)
    parser.add_argument("--insecure-https", action="store_true",
                        help="accept the call's self-signed certificate (tools/demo --check --share)")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    expected = [int(v) for v in args.rgb.split(",")]

    profile = tempfile.mkdtemp(prefix="demo-chromium-")
    os.environ["HOME"] = os.environ["TMPDIR"] = profile
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/lib/chromium/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--allow-loopback-in-peer-connection",
                 "--disable-features=WebRtcHideLocalIpsWithMdns", "--autoplay-policy=no-user-gesture-required",
                 "--log-level=3", f"--user-data-dir={profile}", f"--window-size={width},{height + 160}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # the page's console, printed on a failure
    if args.insecure_https:
        options.add_argument("--ignore-certificate-errors")
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    seen = None
    readings = []
    first_picture_ms = frames_ms = settled_ms = None
    try:
        driver.get(args.url)
        started = time.monotonic()
        deadline = started + args.timeout
        while first_picture_ms is None and time.monotonic() < deadline:
            first = driver.execute_script(FIRST_PICTURE)
            if first["shown"]:
                first_picture_ms = first["ms"]
            else:
                time.sleep(0.05)
        while time.monotonic() < deadline:
            seen = driver.execute_script(PROBE, 4, 4)  # the top-left corner: background, not a window
            if seen and seen["width"] == width and seen["height"] == height and seen["frames"] >= args.min_frames:
                frames_ms = seen["ms"]
                break
            time.sleep(0.25)
        # The background at four places away from the terminal, until every one shows the screen's colour:
        # the first frames are coarse (the call refines a still picture over about a second), so the check
        # is that the share gets there, not that its first frame does.
        while seen and time.monotonic() < deadline:
            readings = [(point, driver.execute_script(PROBE, *point)) for point in probe_points(width, height)]
            if all(reading and colour_off(reading["rgb"], expected) <= COLOUR_TOLERANCE for _, reading in readings):
                settled_ms = max(reading["ms"] for _, reading in readings)
                break
            time.sleep(0.5)
        driver.save_screenshot(args.screenshot)
        if not seen:
            # What the page says of itself, for a failure that otherwise shows only "no frame".
            status = driver.execute_script(
                "const s = document.getElementById('status'); return s ? s.dataset.state + ': ' + s.textContent : null")
            print(f"demo-check: the page's status: {status}; title {driver.title!r}; url {driver.current_url}", file=sys.stderr)
            text = driver.execute_script("return document.body ? document.body.innerText : ''") or ""
            print(f"demo-check: the page's text: {' '.join(text.split())[:400]!r}", file=sys.stderr)
            try:
                for entry in driver.get_log("browser")[-10:]:
                    print(f"demo-check: console: {entry.get('level')} {entry.get('message')}", file=sys.stderr)
            except Exception as error:  # the log may be unavailable; the status line above still says something
                print(f"demo-check: console log unavailable: {error}", file=sys.stderr)
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    first_text = "never" if first_picture_ms is None else f"after {first_picture_ms / 1000:.2f} s"
    print(f"demo-check: video {seen}; first picture {first_text}", file=sys.stderr)
    if not seen:
        print("demo-check: FAIL: the video never showed a frame", file=sys.stderr)
        return 1
    problems = []
    if (seen["width"], seen["height"]) != (width, height):
        problems.append(f"video is {seen['width']}x{seen['height']}, the screen {width}x{height}")
    if seen["frames"] < args.min_frames:
        problems.append(f"only {seen['frames']} frames decoded (want {args.min_frames})")
    for (x, y), reading in readings:
        if not reading:
            problems.append(f"no picture to read at {x},{y}")
        elif colour_off(reading["rgb"], expected) > COLOUR_TOLERANCE:
            problems.append(f"background at {x},{y} is {[round(c, 1) for c in reading['rgb']]}, "
                            f"{colour_off(reading['rgb'], expected):.1f} levels off the screen's {expected} "
                            f"(at most {COLOUR_TOLERANCE}) after {args.timeout:g} s")
    if not readings and not problems:
        problems.append("the background was never read")
    for problem in problems:
        print(f"demo-check: FAIL: {problem}", file=sys.stderr)
    if not problems:
        worst = max(colour_off(reading["rgb"], expected) for _, reading in readings)
        print(f"demo-check: OK: {width}x{height}, first picture after {first_picture_ms / 1000:.2f} s, "
              f"{args.min_frames} frames decoded after {frames_ms / 1000:.1f} s ({seen['frames']} by then), the background "
              f"within {worst:.1f} levels of the screen's {expected} at {len(readings)} places after {settled_ms / 1000:.1f} s "
              f"(times from the page's start); screenshot {args.screenshot}", file=sys.stderr)
    return 1 if problems else 0


def probe_points(width, height):
    """Top-left corners of 16x16 background patches: the picture's corners, clear of the terminal that
    tools/demo-check puts at +200+150 (80x24 characters)."""
    return [(4, 4), (width - 24, 4), (width - 24, height - 24), (4, height - 24)]


def colour_off(rgb, expected):
    """The largest channel difference, levels."""
    return max(abs(a - b) for a, b in zip(rgb, expected))


if __name__ == "__main__":
    sys.exit(main())
