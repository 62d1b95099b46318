#!/usr/bin/python3
"""One glass-to-glass reading in headless Chromium 156 (tools/bench --phases g2g; Debian's python3 for its
selenium): opens either the call's viewer page (--url) or Chrome's own anchor page (--anchor-fps N:
g2g_anchor.html, served here on 127.0.0.1, capturing the X display in $DISPLAY with getDisplayMedia),
installs g2g_reader.js on its <video>, waits --warm seconds, records --window seconds, and prints the
reader's result as one JSON line: {"samples": [...], "timeOrigin", "clockSkewMs", "stats", "jitterBufferTarget",
"anchorSettings": the captured track's settings (anchor only), "error": null or TEXT}.

  g2g_browser.py --profile DIR --layout JSON (--url URL | --anchor-fps N) [--warm S] [--window S]

--layout: {"screenWidth", "screenHeight", "codeX", "codeY", "cell", "columns", "rows"} (screen pixels).
HOME and TMPDIR should point at --profile (Chromium writes there). Exits 1 after printing the JSON when
the page never played or the reading failed. Writes "g2g: window start" and "g2g: window end" to stderr
around the window (the bench reads CPU between them).
"""

import argparse
import functools
import http.server
import json
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "Tests", "EndToEndTests", "Peers"))
from chromium_viewer import FLAGS  # noqa: E402  (the flags each needed on this machine: notes/real-peers.md)
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402

# getDisplayMedia in headless Chromium 156 on X11: the picker is skipped for the source whose title matches
# (the X screen's single RandR monitor is "Entire screen"); --use-fake-ui-for-media-stream must NOT be given:
# its fake picker hands out screen id 0, which ScreenCapturerX11::SelectSource refuses (NotReadableError).
ANCHOR_FLAGS = ["--auto-select-desktop-capture-source=Entire screen"]

PEER = {"viewer": "window.screencastViewer && window.screencastViewer.pc", "anchor": "window.anchor.receiver"}


def serve_here():
    """This folder over HTTP on 127.0.0.1 (a secure context for getDisplayMedia); the server and its URL."""
    handler = functools.partial(QuietHandler, directory=HERE)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, "http://127.0.0.1:%d/" % server.server_address[1]


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def wait_until(driver, script, timeout):
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        value = driver.execute_script(script)
        if value is True:
            return True
        time.sleep(0.2)
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", required=True)
    parser.add_argument("--layout", required=True)
    parser.add_argument("--url")
    parser.add_argument("--anchor-fps", type=int)
    parser.add_argument("--warm", type=float, default=3)
    parser.add_argument("--window", type=float, default=10)
    args = parser.parse_args()
    if bool(args.url) == bool(args.anchor_fps):
        parser.error("give exactly one of --url and --anchor-fps")
    layout = json.loads(args.layout)
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/lib/chromium/chromium"
    extra = os.environ.get("G2G_CHROMIUM_FLAGS", "").split()  # for looking into a failure: --enable-logging ...
    for flag in FLAGS + (ANCHOR_FLAGS if args.anchor_fps else []) + ["--user-data-dir=" + args.profile] + extra:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    result = {"error": None}
    server = None
    try:
        driver.set_script_timeout(30)
        kind = "anchor" if args.anchor_fps else "viewer"
        if args.anchor_fps:
            server, base = serve_here()
            driver.get(base + "g2g_anchor.html?fps=%d&width=%d&height=%d" % (
                args.anchor_fps, layout["screenWidth"], layout["screenHeight"]))
            playing = wait_until(driver, "return window.anchor.state === 'playing' || window.anchor.state", 30)
        else:
            driver.get(args.url)
            playing = wait_until(driver, "const v = document.getElementById('video'); const s = window.screencastViewer;"
                                 " return !!(v && v.videoWidth && s && s.lastStats && s.lastStats.framesDecoded > 0)", 30)
        if playing is not True:
            raise RuntimeError("the %s page did not play within 30 s (state %r)" % (kind, playing))
        with open(os.path.join(HERE, "g2g_reader.js")) as source:
            driver.execute_script(source.read() + "\ninstallG2GReader(document.getElementById('video'), arguments[0],"
                                  " () => %s);" % PEER[kind], layout)
        time.sleep(args.warm)
        driver.execute_async_script("window.g2g.begin().then(arguments[0], (e) => arguments[0](String(e)));")
        sys.stderr.write("g2g: window start\n")  # the bench reads CPU from here (g2g_cpu.py)
        sys.stderr.flush()
        time.sleep(args.window)
        sys.stderr.write("g2g: window end\n")
        sys.stderr.flush()
        result.update(driver.execute_async_script(
            "window.g2g.end().then(arguments[0], (e) => arguments[0]({error: String(e)}));"))
        if args.anchor_fps:
            result["anchorSettings"] = driver.execute_script("return window.anchor.settings")
    except Exception as failure:  # reported in the JSON, for the bench to record against this run
        result["error"] = "%s: %s" % (type(failure).__name__, str(failure)[:1500])
    finally:
        driver.quit()
        if server:
            server.shutdown()
    print(json.dumps(result), flush=True)
    return 1 if result["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
