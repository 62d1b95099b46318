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
  --settle S         once --frames are decoded, keep playing S seconds more before reading (default 0)
  --mark S           also report the page's stats as they were S seconds after the start ("marked"), so a
                     test can measure a window (frames decoded between the mark and the end)
  --save-rgba PATH   write the whole video picture as Chromium shows it (drawn on a canvas, read back) as
                     packed RGBA, 4 bytes a pixel, rows top to bottom, to PATH
  --default-playout  for measuring the low-latency settings against Chromium's defaults: before the page
                     loads, make the receiver's jitterBufferTarget/playoutDelayHint setters no-ops and drop
                     the playout-delay a=extmap from the call's answer

--sound: start Chromium with --autoplay-policy=no-user-gesture-required; once --frames are decoded, read the
page's sound ("sound": {"before": the page's window.screencastViewer.sound.stats then, "dataSound" then,
"after": the stats after --settle seconds more, "muted": the <video>'s muted after the page's unmute button
was clicked, "dataSoundAfter", "note": the page's sound note}).

The report also has "selectedPair" (Chromium's selected candidate pair: local and remote protocol, type,
the remote address and port) and "lowLatency": the receiver's jitterBufferTarget and playoutDelayHint as the page left
them, the answer's a=extmap lines, and Chromium's jitter buffer figures (inbound-rtp jitterBufferDelay /
jitterBufferEmittedCount as ms per frame, and jitterBufferTargetDelay likewise).
"""

import argparse
import base64
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

# Draws the playing <video> at its own size on a canvas (`context`), or returns null before its first frame.
DRAW_VIDEO = """
const video = document.getElementById("video");
if (!video || !video.videoWidth) return null;
const canvas = document.createElement("canvas");
canvas.width = video.videoWidth;
canvas.height = video.videoHeight;
const context = canvas.getContext("2d", { willReadFrequently: true });
context.drawImage(video, 0, 0);
"""

READ_PIXELS = DRAW_VIDEO + """
const points = arguments[0];
return points.map(([x, y]) => Array.from(context.getImageData(x, y, 1, 1).data));
"""

# The whole video picture as base64 of its RGBA bytes (in chunks: String.fromCharCode takes so many arguments).
READ_PICTURE = DRAW_VIDEO + """
const data = context.getImageData(0, 0, canvas.width, canvas.height).data;
let text = "";
for (let i = 0; i < data.length; i += 32768) text += String.fromCharCode.apply(null, data.subarray(i, i + 32768));
return [canvas.width, canvas.height, btoa(text)];
"""


# Chromium's defaults, for a measured comparison (--default-playout).
DEFAULT_PLAYOUT = """
for (const name of ["jitterBufferTarget", "playoutDelayHint"]) {
  const proto = RTCRtpReceiver.prototype, own = Object.getOwnPropertyDescriptor(proto, name);
  if (own) Object.defineProperty(proto, name, { get: own.get, set() {}, configurable: true });
}
const setRemote = RTCPeerConnection.prototype.setRemoteDescription;
RTCPeerConnection.prototype.setRemoteDescription = function (description) {
  const sdp = description.sdp.split("\\r\\n").filter((l) => !l.includes("rtp-hdrext/playout-delay")).join("\\r\\n");
  return setRemote.call(this, { type: description.type, sdp });
};
"""

LOW_LATENCY = """
const done = arguments[0], pc = window.screencastViewer && window.screencastViewer.pc;
if (!pc) return done(null);
const receiver = pc.getReceivers()[0];
const out = { jitterBufferTarget: receiver.jitterBufferTarget, playoutDelayHint: receiver.playoutDelayHint,
  answerExtmaps: (pc.remoteDescription ? pc.remoteDescription.sdp : "").split("\\r\\n").filter((l) => l.startsWith("a=extmap:")) };
pc.getStats().then((report) => {
  report.forEach((s) => {
    if (s.type === "inbound-rtp" && s.kind === "video" && s.jitterBufferEmittedCount) {
      out.jitterBufferMsPerFrame = 1000 * s.jitterBufferDelay / s.jitterBufferEmittedCount;
      out.jitterBufferTargetMsPerFrame = 1000 * (s.jitterBufferTargetDelay || 0) / s.jitterBufferEmittedCount;
      out.framesEmitted = s.jitterBufferEmittedCount;
    }
  });
  done(out);
}, () => done(out));
"""


# Chromium's own view of the transport: the selected candidate pair's local and remote candidates.
SELECTED_PAIR = """
const done = arguments[0], pc = window.screencastViewer && window.screencastViewer.pc;
if (!pc) return done(null);
pc.getStats().then((report) => {
  let pair = null;
  report.forEach((s) => { if (s.type === "transport" && s.selectedCandidatePairId) pair = report.get(s.selectedCandidatePairId); });
  if (!pair) return done(null);
  const local = report.get(pair.localCandidateId) || {}, remote = report.get(pair.remoteCandidateId) || {};
  done({ state: pair.state, localProtocol: local.protocol, localType: local.candidateType, localTcpType: local.tcpType || null,
         remoteProtocol: remote.protocol, remoteType: remote.candidateType, remoteAddress: remote.address, remotePort: remote.port });
}, () => done(null));
"""


def start_browser(profile, insecure_https=False, sound=False):
    """Headless Chromium with FLAGS and its profile in `profile`, driven by chromedriver (also used by
    chromium_e2ee.py)."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/lib/chromium/chromium"
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument("--user-data-dir=" + profile)
    if insecure_https:
        options.add_argument("--ignore-certificate-errors")
    if sound:
        options.add_argument("--autoplay-policy=no-user-gesture-required")
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--timeout", type=float, default=30)
    parser.add_argument("--points", default="")
    parser.add_argument("--profile", required=True)
    parser.add_argument("--screenshot")
    parser.add_argument("--settle", type=float, default=0)
    parser.add_argument("--mark", type=float, default=0)
    parser.add_argument("--save-rgba")
    parser.add_argument("--insecure-https", action="store_true",
                        help="accept the call's self-signed HTTPS certificate (--share/--https)")
    parser.add_argument("--default-playout", action="store_true",
                        help="measure against Chromium's defaults: no jitterBufferTarget 0, no playout-delay extension")
    parser.add_argument("--sound", action="store_true", help="read the page's sound (see above)")
    parser.add_argument("--leave", action="store_true",
                        help="leave the page as a person closing the tab would (pagehide) before quitting")
    args = parser.parse_args()
    points = [[int(v) for v in p.split(",")] for p in args.points.split(";") if p]

    driver = start_browser(args.profile, insecure_https=args.insecure_https, sound=args.sound)
    result = {"error": None, "stats": None, "pixels": None, "screenshot": None}
    start = time.monotonic()
    try:
        driver.set_script_timeout(10)
        if args.default_playout:
            driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": DEFAULT_PLAYOUT})
        driver.get(args.url)
        result["secureContext"] = driver.execute_script("return window.isSecureContext")
        stats = None
        while time.monotonic() - start < args.timeout:
            stats = driver.execute_script("return window.screencastViewer ? window.screencastViewer.lastStats : null")
            if args.mark > 0 and "marked" not in result and time.monotonic() - start >= args.mark:
                result["marked"] = stats
            if stats and stats.get("framesDecoded", 0) >= args.frames and stats.get("width"):
                break
            time.sleep(0.2)
        if args.sound:
            sound_stats = "return window.screencastViewer && window.screencastViewer.sound ? window.screencastViewer.sound.stats : null"
            result["sound"] = {"before": driver.execute_script(sound_stats),
                               "dataSound": driver.execute_script("return document.body.dataset.sound || null")}
            driver.execute_script("document.getElementById('unmute').click()")
        if args.settle > 0:
            time.sleep(args.settle)
        if args.sound:
            result["sound"]["after"] = driver.execute_script(sound_stats)
            result["sound"]["muted"] = driver.execute_script("return document.getElementById('video').muted")
            result["sound"]["dataSoundAfter"] = driver.execute_script("return document.body.dataset.sound || null")
            result["sound"]["note"] = driver.execute_script("return document.getElementById('sound-note').textContent")
            stats = driver.execute_script("return window.screencastViewer ? window.screencastViewer.lastStats : null") or stats
        result["stats"] = stats
        result["lowLatency"] = driver.execute_async_script(LOW_LATENCY)
        result["selectedPair"] = driver.execute_async_script(SELECTED_PAIR)
        result["elapsedMs"] = round((time.monotonic() - start) * 1000)
        result["state"] = driver.execute_script("return document.body.dataset.state || null")
        size = driver.execute_script("const v = document.getElementById('video'); return [v.videoWidth, v.videoHeight, v.paused]")
        result["videoWidth"], result["videoHeight"], result["paused"] = size
        if points:
            result["pixels"] = driver.execute_script(READ_PIXELS, points)
        if args.save_rgba:
            picture = driver.execute_script(READ_PICTURE)
            if picture:
                with open(args.save_rgba, "wb") as out:
                    out.write(base64.b64decode(picture[2]))
                result["savedRGBA"] = {"path": args.save_rgba, "width": picture[0], "height": picture[1]}
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
