#!/usr/bin/env python3
"""Headless Chromium on the call's viewer page across a restart of the call, for ChromiumReconnectTests.
Run with the system python3 (Debian's selenium); same browser set-up as chromium_viewer.py.

1. Opens --url and waits until the page's peer connection has decoded --frames frames, then creates the
   file DIR/playing.
2. Waits (up to --timeout in all) for the test to create DIR/restarted (the test stops the call with SIGINT
   and starts a new one on the same port before it does), noting each change of the page's data-state.
3. From then on waits until the page has a new RTCPeerConnection, its data-state is "connected", that
   connection's getStats shows --frames decoded frames and the <video>'s getVideoPlaybackQuality()
   .totalVideoFrames rises over one second.

Prints one JSON object on stdout:
  {"error": TEXT or null, "firstFrames", "firstElapsedMs", "states": [[ms since start, state], ...],
   "recovered": bool, "liveMs": ms from seeing DIR/restarted to the new connection "connected" with a first
   frame decoded, "recoveryMs": ms from seeing DIR/restarted to step 3 done, "newFrames",
   "totalVideoFrames": [before, after] (the one-second sample of step 3), "width", "height", "attempt",
   "state", "status": the page's status text}
"""

import argparse
import json
import os
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

FLAGS = [
    "--headless=new", "--no-sandbox", "--allow-loopback-in-peer-connection",
    "--disable-features=WebRtcHideLocalIpsWithMdns", "--log-level=3", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--window-size=1280,800",
]

# framesDecoded etc. of the page's current peer connection, and whether it is the first one.
CURRENT = """
const done = arguments[arguments.length - 1];
const viewer = window.screencastViewer;
const video = document.getElementById("video");
const quality = video && video.getVideoPlaybackQuality ? video.getVideoPlaybackQuality().totalVideoFrames : null;
const base = { state: document.body.dataset.state || null, status: document.getElementById("status").textContent,
  attempt: viewer ? viewer.attempt : null, totalVideoFrames: quality, framesDecoded: 0, width: 0, height: 0,
  pcState: null, firstPc: !!(viewer && viewer.pc && viewer.pc === window.__firstPc) };
if (!viewer || !viewer.pc) { done(base); return; }
const pc = viewer.pc;
base.pcState = pc.connectionState;
pc.getStats().then((report) => {
  report.forEach((stat) => {
    if (stat.type === "inbound-rtp" && (stat.kind || stat.mediaType) === "video") {
      base.framesDecoded = stat.framesDecoded || 0;
      base.width = stat.frameWidth || 0;
      base.height = stat.frameHeight || 0;
    }
  });
  done(base);
}).catch(() => done(base));
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--frames", type=int, default=30)
    parser.add_argument("--timeout", type=float, default=90)
    parser.add_argument("--profile", required=True)
    parser.add_argument("--dir", required=True)
    args = parser.parse_args()

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/lib/chromium/chromium"
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument("--user-data-dir=" + args.profile)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    result = {"error": None, "recovered": False, "states": []}
    start = time.monotonic()

    def ms():
        return round((time.monotonic() - start) * 1000)

    def current():
        now = driver.execute_async_script(CURRENT)
        if not result["states"] or result["states"][-1][1] != now["state"]:
            result["states"].append([ms(), now["state"]])
        return now

    try:
        driver.set_script_timeout(10)
        driver.get(args.url)
        # 1. Playing.
        while time.monotonic() - start < args.timeout:
            now = current()
            if now["framesDecoded"] >= args.frames and now["state"] == "connected":
                driver.execute_script("window.__firstPc = window.screencastViewer.pc")
                result["firstFrames"] = now["framesDecoded"]
                result["firstElapsedMs"] = ms()
                break
            time.sleep(0.2)
        else:
            raise RuntimeError("the first call never played: %r" % (now,))
        open(os.path.join(args.dir, "playing"), "w").close()
        # 2. The test restarts the call.
        restarted = os.path.join(args.dir, "restarted")
        while not os.path.exists(restarted):
            if time.monotonic() - start > args.timeout:
                raise RuntimeError("the test never restarted the call")
            current()
            time.sleep(0.2)
        seen = time.monotonic()
        result["restartSeenMs"] = ms()
        # 3. Playing again, on a new peer connection.
        while time.monotonic() - start < args.timeout:
            now = current()
            if not now["firstPc"] and now["state"] == "connected" and now["framesDecoded"] > 0 and "liveMs" not in result:
                result["liveMs"] = round((time.monotonic() - seen) * 1000)
            if not now["firstPc"] and now["state"] == "connected" and now["framesDecoded"] >= args.frames:
                before = now["totalVideoFrames"]
                time.sleep(1)
                after = current()
                if after["totalVideoFrames"] is not None and before is not None and after["totalVideoFrames"] > before:
                    result["recovered"] = True
                    result["recoveryMs"] = round((time.monotonic() - seen) * 1000)
                    result["totalVideoFrames"] = [before, after["totalVideoFrames"]]
                    now = after
                    break
            time.sleep(0.2)
        result.update({k: now.get(k) for k in ("framesDecoded", "width", "height", "attempt", "state", "status", "pcState")})
        result["newFrames"] = now.get("framesDecoded")
    except Exception as error:
        result["error"] = repr(error)
    finally:
        driver.quit()
    print(json.dumps(result))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
