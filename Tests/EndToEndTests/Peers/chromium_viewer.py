#!/usr/bin/env python3
"""Headless Chromium (Debian `chromium` + `chromium-driver`, driven by python3-selenium) on the call's
viewer page, for the end-to-end tests. Run with the system python3 (Debian's selenium).

It opens the page, waits until the page's own getStats poll (`window.screencastViewer.lastStats`) shows at
least --frames decoded frames, then reads pixels from the playing <video> through a canvas, and prints one
JSON object on stdout:

  {"stats": {...lastStats...}, "videoWidth", "videoHeight", "pixels": [[r, g, b, a], ...] (at --points),
   "state": the page's data-state, "elapsedMs", "error": TEXT or null, "screenshot": PATH or null}

Options:
  --url URL          the viewer page (with ?token=… when needed)
  --frames N         decoded frames to wait for (default 60)
  --timeout S        give up after S seconds (default 30)
  --points X,Y;...   pixels to read, in video pixel coordinates
  --profile DIR      a writable folder for Chromium's profile (HOME and TMPDIR should point there too)
  --screenshot PATH  save the page as PNG when done
"""

import argparse
import json
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

FLAGS = [
    "--headless=new", "--no-sandbox", "--allow-loopback-in-peer-connection",
    "--disable-features=WebRtcHideLocalIpsWithMdns", "--log-level=3", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--window-size=1280,800",
]

READ_PIXELS = """
const points = arguments[0];
const video = document.getElementById("video");
if (!video || !video.videoWidth) return null;
const canvas = document.createElement("canvas");
canvas.width = video.videoWidth;
canvas.height = video.videoHeight;
const context = canvas.getContext("2d", { willReadFrequently: true });
context.drawImage(video, 0, 0);
return points.map(([x, y]) => Array.from(context.getImageData(x, y, 1, 1).data));
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--timeout", type=float, default=30)
    parser.add_argument("--points", default="")
    parser.add_argument("--profile", required=True)
    parser.add_argument("--screenshot")
    parser.add_argument("--insecure-https", action="store_true",
                        help="accept the call's self-signed HTTPS certificate (--share/--https)")
    parser.add_argument("--leave", action="store_true",
                        help="leave the page as a person closing the tab would (pagehide) before quitting")
    args = parser.parse_args()
    points = [[int(v) for v in p.split(",")] for p in args.points.split(";") if p]

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/lib/chromium/chromium"
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument("--user-data-dir=" + args.profile)
    if args.insecure_https:
        options.add_argument("--ignore-certificate-errors")
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    result = {"error": None, "stats": None, "pixels": None, "screenshot": None}
    start = time.monotonic()
    try:
        driver.set_script_timeout(10)
        driver.get(args.url)
        result["secureContext"] = driver.execute_script("return window.isSecureContext")
        stats = None
        while time.monotonic() - start < args.timeout:
            stats = driver.execute_script("return window.screencastViewer ? window.screencastViewer.lastStats : null")
            if stats and stats.get("framesDecoded", 0) >= args.frames and stats.get("width"):
                break
            time.sleep(0.2)
        result["stats"] = stats
        result["elapsedMs"] = round((time.monotonic() - start) * 1000)
        result["state"] = driver.execute_script("return document.body.dataset.state || null")
        size = driver.execute_script("const v = document.getElementById('video'); return [v.videoWidth, v.videoHeight, v.paused]")
        result["videoWidth"], result["videoHeight"], result["paused"] = size
        if points:
            result["pixels"] = driver.execute_script(READ_PIXELS, points)
        if args.screenshot:
            driver.save_screenshot(args.screenshot)
            result["screenshot"] = args.screenshot
        if args.leave:
            # A person closing the tab: the page gets pagehide (its WHEP DELETE), then the tab goes.
            driver.get("about:blank")
            time.sleep(1.0)
    except Exception as error:
        result["error"] = repr(error)
    finally:
        driver.quit()
    print(json.dumps(result))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
