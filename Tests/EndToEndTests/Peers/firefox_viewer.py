#!/usr/bin/env python3
"""Headless Firefox ESR (Debian `firefox-esr`) on the call's viewer page, driven over Marionette with the PyPI
package `marionette-driver` (no geckodriver), for FirefoxViewerTests. Run with the venv's python (tools/setup
installs marionette-driver there).

In a loopback-only network namespace Firefox gathers no ICE candidate unless the namespace has a default
route (`ip route add default dev lo src 127.0.0.1`, the test adds it) and skips loopback unless the pref
`media.peerconnection.ice.loopback` is true (set here).

Opens --url (an E2EE key, if any, in its #key= fragment), measures when the <video> shows its first frame,
then runs --steps, a JSON array of steps in order (the vocabulary of chromium_e2ee.py):

  {"wait": "decoded", "frames": N}        until the page has decoded N frames in all (and, with e2ee, its
                                          e2ee state is "decrypting")
  {"wait": "state", "state": S, "received": N}
                                          until the page's e2ee state is S and its worker has received N
                                          frames in all
  {"type": KEY}                           type KEY into the page's key field and press Unlock
  {"navigate": URL}                       load URL (a new page: a link without the key ends the old page)
  {"hold": SECONDS}                       wait
  {"pixels": true}                        read the video's pixels at --points through a canvas

Every step ends with a snapshot of the page. Prints one JSON object on stdout:
  {"error": TEXT or null, "browser": "Firefox 153.…", "firstFrameMs": ms from navigation start (the page's
   time origin) to the video's first frame, or null, "loadMs": the same to the load event,
   "snapshots": [{"step", "elapsedMs", "stats": lastStats, "framesDecoded", "videoSize": [w, h],
   "e2eeState", "e2ee": {state, mode, counts}, "received", "message", "panelVisible", "status",
   "statusState", "statusBlocked", "pixels"}, ...]}
A step that times out (--timeout for the whole run) ends the run with "error".
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time

try:
    from marionette_driver import By
    from marionette_driver.errors import ScriptTimeoutException
    from marionette_driver.marionette import Marionette
except ImportError as missing:
    sys.exit("firefox_viewer.py: %s: run tools/setup (it installs marionette-driver into ./venv)" % missing)

FIREFOX = "/usr/lib/firefox-esr/firefox-esr"

PREFS = {
    # Loopback host candidates (with a default route in the namespace, the only thing Firefox needs).
    "media.peerconnection.ice.loopback": True,
    # Quiet, quick start: nothing to fetch, nobody to greet.
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "browser.startup.page": 0,
    "browser.aboutwelcome.enabled": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "datareporting.healthreport.uploadEnabled": False,
    "toolkit.telemetry.enabled": False,
    "app.update.disabledForTesting": True,
    "app.normandy.enabled": False,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "extensions.update.enabled": False,
    "browser.safebrowsing.update.enabled": False,
    "browser.region.network.url": "",
    "browser.search.geoip.url": "",
    "services.settings.server": "http://127.0.0.1:9/",
    "browser.newtabpage.enabled": False,
}

SNAPSHOT = """
const viewer = window.screencastViewer, video = document.getElementById("video");
const panel = document.getElementById("e2ee"), status = document.getElementById("status");
return { stats: viewer ? viewer.lastStats : null, e2eeState: document.body.dataset.e2eeState || null,
  e2ee: viewer && viewer.e2ee ? { state: viewer.e2ee.state, mode: viewer.e2ee.mode, counts: viewer.e2ee.counts } : null,
  message: panel && !panel.hidden ? document.getElementById("e2ee-message").textContent : null,
  panelVisible: !!(panel && !panel.hidden), status: status.textContent, statusState: status.dataset.state || null,
  statusBlocked: status.dataset.blocked || null, videoSize: video ? [video.videoWidth, video.videoHeight] : null,
  paused: video ? video.paused : null };
"""

# The playing <video> drawn at its own size on a canvas, read back at the points; null before its first frame.
READ_PIXELS = """
const video = document.getElementById("video");
if (!video || !video.videoWidth) return null;
const canvas = document.createElement("canvas");
canvas.width = video.videoWidth;
canvas.height = video.videoHeight;
const context = canvas.getContext("2d", { willReadFrequently: true });
context.drawImage(video, 0, 0);
return arguments[0].map(([x, y]) => Array.from(context.getImageData(x, y, 1, 1).data));
"""

# When the <video> presented its first frame, in ms of the page's clock (navigation start = 0): the first
# requestVideoFrameCallback, or, when a frame is already there, the `loadeddata` time this page recorded.
FIRST_FRAME = """
const resolve = arguments[arguments.length - 1];
const video = document.getElementById("video");
if (video.videoWidth) return resolve({ ms: window.__firstFrameMs ?? null, already: true });
video.requestVideoFrameCallback((now) => resolve({ ms: now, already: false }));
"""

# Set as early as the harness can: the `loadeddata` time, for a frame that beats FIRST_FRAME's callback.
MARK_LOADEDDATA = """
const video = document.getElementById("video");
video.addEventListener("loadeddata", () => { window.__firstFrameMs ??= performance.now(); }, { once: true });
return performance.timing.loadEventEnd - performance.timing.navigationStart;
"""


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_firefox(profile, log):
    """Firefox with a fresh profile in `profile` (prefs in user.js) listening for Marionette on a free port,
    and a Marionette session to it."""
    shutil.rmtree(profile, ignore_errors=True)
    os.makedirs(profile)
    port = free_port()
    prefs = dict(PREFS, **{"marionette.port": port})
    with open(os.path.join(profile, "user.js"), "w") as out:
        for name, value in prefs.items():
            out.write("user_pref(%s, %s);\n" % (json.dumps(name), json.dumps(value)))
    env = dict(os.environ, MOZ_HEADLESS="1", MOZ_CRASHREPORTER_DISABLE="1", HOME=os.path.dirname(profile) or ".")
    process = subprocess.Popen(
        [FIREFOX, "--headless", "--marionette", "--no-remote", "--profile", profile, "about:blank"],
        stdout=log, stderr=log, env=env, start_new_session=True)
    client = Marionette(host="127.0.0.1", port=port, socket_timeout=60)
    deadline = time.monotonic() + 30
    while True:
        try:
            client.raise_for_port(timeout=1)
            break
        except Exception:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise RuntimeError("Firefox did not open Marionette on port %d (exit %s)" % (port, process.poll()))
    client.start_session()
    return process, client


# Page scripts run with sandbox=None, in the page's own scope: Marionette's default sandbox sees the window
# through Xray wrappers, where the page's own properties (window.screencastViewer) are undefined.
def snapshot(client):
    page = client.execute_script(SNAPSHOT, sandbox=None)
    stats = page.get("stats") or {}
    counts = (page.get("e2ee") or {}).get("counts") or {}
    page["framesDecoded"] = stats.get("framesDecoded", 0)
    page["received"] = counts.get("received", 0)
    return page


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--profile", required=True, help="a folder to create Firefox's profile in (emptied first)")
    parser.add_argument("--steps", default='[{"wait": "decoded", "frames": 60}, {"pixels": true}]')
    parser.add_argument("--points", default="", help="X,Y;X,Y;... in video pixels")
    parser.add_argument("--timeout", type=float, default=30)
    args = parser.parse_args()
    points = [[int(v) for v in p.split(",")] for p in args.points.split(";") if p]
    steps = json.loads(args.steps)

    result = {"error": None, "browser": None, "firstFrameMs": None, "loadMs": None, "snapshots": []}
    folder = os.path.dirname(os.path.abspath(args.profile))
    os.makedirs(folder, exist_ok=True)
    log = open(os.path.join(folder, "firefox.log"), "w")
    process, client = start_firefox(args.profile, log)
    start = time.monotonic()
    deadline = start + args.timeout
    try:
        caps = client.session_capabilities
        result["browser"] = "%s %s" % (caps.get("browserName"), caps.get("browserVersion"))
        client.timeout.script = 10
        client.navigate(args.url)
        result["loadMs"] = client.execute_script(MARK_LOADEDDATA, sandbox=None)
        e2ee_page = client.execute_script("return document.body.dataset.e2ee === 'on'", sandbox=None)
        first_frame_pending = True
        for step in steps:
            if step.get("wait") == "decoded":
                if first_frame_pending:
                    # Blocks (10 s at most) until the first frame shows; the rest of the wait polls.
                    try:
                        first = client.execute_async_script(FIRST_FRAME, sandbox=None)
                    except ScriptTimeoutException:
                        raise TimeoutError("no first frame within 10 s of the page's load (status: %r)" % snapshot(client)["status"])
                    result["firstFrameMs"] = round(first["ms"]) if first and first.get("ms") is not None else None
                    result["firstFrameAlreadyShown"] = bool(first and first.get("already"))
                    first_frame_pending = False
                while True:
                    now = snapshot(client)
                    if now["framesDecoded"] >= step["frames"] and (not e2ee_page or now["e2eeState"] == "decrypting"):
                        break
                    if time.monotonic() > deadline:
                        raise TimeoutError("waiting for %d decoded frames (now %d)" % (step["frames"], now["framesDecoded"]))
                    time.sleep(0.1)
            elif step.get("wait") == "state":
                while True:
                    now = snapshot(client)
                    if now["e2eeState"] == step["state"] and now["received"] >= step.get("received", 0):
                        break
                    if time.monotonic() > deadline:
                        raise TimeoutError("waiting for e2ee state %s (now %s, %d received)" % (step["state"], now["e2eeState"], now["received"]))
                    time.sleep(0.1)
            elif "type" in step:
                client.find_element(By.ID, "e2ee-key").send_keys(step["type"])
                client.find_element(By.CSS_SELECTOR, "#e2ee-entry button").click()
            elif "navigate" in step:
                client.navigate(step["navigate"])
                e2ee_page = client.execute_script("return document.body.dataset.e2ee === 'on'", sandbox=None)
            elif "hold" in step:
                time.sleep(step["hold"])
            page = snapshot(client)
            page["step"] = step
            page["elapsedMs"] = round((time.monotonic() - start) * 1000)
            if step.get("pixels") and points:
                page["pixels"] = client.execute_script(READ_PIXELS, script_args=[points], sandbox=None)
            result["snapshots"].append(page)
    except Exception as error:
        result["error"] = repr(error)
        try:
            result["last"] = snapshot(client)
        except Exception:
            pass
    finally:
        try:
            client.delete_session()
        except Exception:
            pass
        # Marionette's quit() waits on the instance it started; this one is ours: end its process group.
        try:
            os.killpg(process.pid, 15)
            process.wait(timeout=10)
        except Exception:
            try:
                os.killpg(process.pid, 9)
            except Exception:
                pass
            process.wait()
    print(json.dumps(result))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
