#!/usr/bin/env python3
"""Headless Chromium on the viewer page of a call that encrypts end to end, for ChromiumE2EETests. Run
with the system python3 (Debian's selenium); the browser is chromium_viewer.py's.

Opens --url (the key, if any, in its #key= fragment), then runs --steps, a JSON array of steps in order:

  {"wait": "decoded", "more": N}           until the page has decoded N more frames than at the step's
                                           start and its e2ee state is "decrypting"
  {"wait": "state", "state": S, "received": N}
                                           until the page's e2ee state is S and its worker has received N
                                           more frames than at the step's start
  {"wait": "status", "text": T}            until the page's status line reads T (its snapshot: "statusMs", when)
  {"type": KEY}                            type KEY into the page's key field and press Unlock
  {"fragment": KEY}                        go to the same page with #key=KEY (a new link: hashchange)
  {"rotate": {"file": PATH, "passphrase": P, "pid": PID}}
                                           write P to PATH (mode 0600) and send SIGHUP to PID (the call)
  {"hold": SECONDS}                        wait
  {"pixels": true}                         read the video's pixels at --points through a canvas
  {"unmute": true}                         click the page's Unmute button (with --sound: Chromium plays
                                           without a gesture)
  {"pointer": ID}                          move the pointer onto the element ID (a pointer move, then
                                           hover), wait (3 s at most) until the overlay (#bar) is fully
                                           shown again, and count the lock's green pixels in a screenshot
                                           of #lock ("lockPixels"; "wokeMs": the wait)

Every step ends with a snapshot of the page. Prints one JSON object on stdout:
  {"error": TEXT or null, "snapshots": [{"step", "elapsedMs", "stats": lastStats (with its e2ee part),
   "framesDecoded", "e2eeState", "message": the panel's text or null, "panelVisible", "overlay": the
   stats overlay's text, "bar": {"opacity": #bar's computed opacity, "idle": body.idle, "lockHidden",
   "lockSvg": #lock holds an <svg>, "lockBox": [width, height] in CSS px}, "panelGlyph": the computed
   content of the key panel message's ::before (its lock), "sound": the page's sound stats
   (window.screencastViewer.sound.stats: audioLevel, totalSamplesReceived, concealedSamples, ...),
   "pixels"}, ...]}
A step that times out (--timeout for the whole run) ends the run with "error".
"""

import argparse
import json
import os
import signal
import sys
import time

import struct
import zlib

from chromium_viewer import READ_PIXELS, start_browser
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

SNAPSHOT = """
const viewer = window.screencastViewer;
const panel = document.getElementById("e2ee");
return { stats: viewer ? viewer.lastStats : null, e2eeState: document.body.dataset.e2eeState || null,
  e2ee: viewer && viewer.e2ee ? { state: viewer.e2ee.state, mode: viewer.e2ee.mode, counts: viewer.e2ee.counts } : null,
  message: panel && !panel.hidden ? document.getElementById("e2ee-message").textContent : null,
  panelVisible: !!(panel && !panel.hidden), overlay: document.getElementById("stats").textContent,
  status: document.getElementById("status").textContent, statusState: document.getElementById("status").dataset.state,
  statusBlocked: document.getElementById("status").dataset.blocked || null,
  panelGlyph: getComputedStyle(document.getElementById("e2ee-message"), "::before").content,
  sound: viewer && viewer.sound ? viewer.sound.stats : null,
  bar: (() => {
    const bar = document.getElementById("bar"), lock = document.getElementById("lock");
    const box = lock ? lock.getBoundingClientRect() : { width: 0, height: 0 };
    return { opacity: Number(getComputedStyle(bar).opacity), idle: document.body.classList.contains("idle"),
      lockHidden: lock ? lock.hidden : null, lockSvg: !!(lock && lock.querySelector("svg")), lockBox: [box.width, box.height] };
  })() };
"""


def snapshot(driver):
    page = driver.execute_script(SNAPSHOT)
    stats = page.get("stats") or {}
    counts = (page.get("e2ee") or {}).get("counts") or {}
    page["framesDecoded"] = stats.get("framesDecoded", 0)
    page["received"] = counts.get("received", 0)
    return page


def png_rows(data):
    """The rows of an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium's screenshots are) as bytes, and the
    channels per pixel."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    position, compressed = 8, b""
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        body = data[position + 8:position + 8 + length]
        position += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            compressed += body
    channels = {2: 3, 6: 4}[colour]
    assert depth == 8 and interlace == 0, "unexpected PNG format"
    raw, stride, rows, previous, offset = zlib.decompress(compressed), width * channels, [], bytearray(width * channels), 0
    for _ in range(height):
        kind, line = raw[offset], bytearray(raw[offset + 1:offset + 1 + stride])
        offset += 1 + stride
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b = previous[x]
            c = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        previous = line
    return rows, channels


def green_pixels(png):
    """Pixels of the lock's green (#4d4 = 68,221,68, drawn over the overlay's dark background) in a PNG."""
    rows, channels = png_rows(png)
    return sum(1 for row in rows for x in range(0, len(row), channels)
               if row[x + 1] > 150 and row[x] < 130 and row[x + 2] < 130)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--profile", required=True)
    parser.add_argument("--steps", required=True)
    parser.add_argument("--points", default="")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--sound", action="store_true", help="let the page play sound without a gesture")
    args = parser.parse_args()
    points = [[int(v) for v in p.split(",")] for p in args.points.split(";") if p]
    steps = json.loads(args.steps)

    driver = start_browser(args.profile, sound=args.sound)
    result = {"error": None, "snapshots": []}
    start = time.monotonic()
    deadline = start + args.timeout
    try:
        driver.set_script_timeout(10)
        driver.get(args.url)
        for step in steps:
            before = snapshot(driver)
            if step.get("wait") == "decoded":
                while True:
                    now = snapshot(driver)
                    if now["framesDecoded"] >= before["framesDecoded"] + step["more"] and now["e2eeState"] == "decrypting":
                        break
                    if time.monotonic() > deadline:
                        raise TimeoutError("waiting for %d more decoded frames" % step["more"])
                    time.sleep(0.2)
            elif step.get("wait") == "state":
                while True:
                    now = snapshot(driver)
                    if now["e2eeState"] == step["state"] and now["received"] >= before["received"] + step.get("received", 0):
                        break
                    if time.monotonic() > deadline:
                        raise TimeoutError("waiting for e2ee state %s (now %s)" % (step["state"], now["e2eeState"]))
                    time.sleep(0.2)
            elif step.get("wait") == "status":
                while True:
                    now = snapshot(driver)
                    if now["status"] == step["text"]:
                        break
                    if time.monotonic() > deadline:
                        raise TimeoutError("waiting for the status %r (now %r)" % (step["text"], now["status"]))
                    time.sleep(0.1)
            elif "type" in step:
                field = driver.find_element(By.ID, "e2ee-key")
                field.send_keys(step["type"])
                driver.find_element(By.CSS_SELECTOR, "#e2ee-entry button").click()
            elif "fragment" in step:
                driver.execute_script("location.hash = 'key=' + encodeURIComponent(arguments[0])", step["fragment"])
            elif "rotate" in step:
                rotate = step["rotate"]
                descriptor = os.open(rotate["file"] + ".new", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.write(descriptor, (rotate["passphrase"] + "\n").encode())
                os.close(descriptor)
                os.replace(rotate["file"] + ".new", rotate["file"])
                os.kill(rotate["pid"], signal.SIGHUP)
            elif "unmute" in step:
                driver.execute_script("document.getElementById('unmute').click()")
            elif "hold" in step:
                time.sleep(step["hold"])
            elif "pointer" in step:
                moved = time.monotonic()
                ActionChains(driver).move_to_element(driver.find_element(By.ID, step["pointer"])).perform()
                while snapshot(driver)["bar"]["opacity"] < 1:
                    if time.monotonic() > moved + 3:
                        raise TimeoutError("the overlay did not come back on a pointer move")
                    time.sleep(0.05)
                woke = round((time.monotonic() - moved) * 1000)
            page = snapshot(driver)
            page["step"] = step
            page["elapsedMs"] = round((time.monotonic() - start) * 1000)
            if step.get("pixels") and points:
                page["pixels"] = driver.execute_script(READ_PIXELS, points)
            if "pointer" in step:
                page["wokeMs"] = woke
                page["lockPixels"] = green_pixels(driver.find_element(By.ID, "lock").screenshot_as_png)
            result["snapshots"].append(page)
    except Exception as error:
        result["error"] = repr(error)
        try:
            result["last"] = snapshot(driver)
        except Exception:
            pass
    finally:
        driver.quit()
    print(json.dumps(result))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
