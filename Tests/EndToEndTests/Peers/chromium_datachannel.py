#!/usr/bin/env python3
"""Headless Chromium (its own SCTP, dcsctp) opens a data channel to the call, for DataChannelCallTests. Run
with the system python3 (Debian's selenium), inside a loopback-only network namespace.

It loads the call's /stats (same origin, so no viewer page starts), then runs a script that makes its own
RTCPeerConnection: recvonly video + two data channels ("echo" with protocol screencast-echo, and "big"),
POSTs the offer to /whep, and on "echo" sends a string, bytes, 65536 characters and 262144 bytes (the call's
a=max-message-size) and waits for the four echoes; then asks Chromium to send 262145 bytes on "big"
(Chromium must refuse: the call's limit reached it through the answer). Prints one JSON object:
  {"echoes": ["s:LEN" | "b:LEN", ...], "refused": the error's name or null, "maxMessageSize": pc.sctp's,
   "framesDecoded": the video's, "rttMedianMs", "rttMaxMs": 20 echo round trips of a short string,
   "error": TEXT or null}

Options: --url BASE (http://127.0.0.1:PORT), --profile DIR, --timeout S (default 30).
"""

import argparse
import json

from chromium_viewer import start_browser

SCRIPT = """
const done = arguments[arguments.length - 1];
const waitFor = async (predicate, ms) => {
  const end = performance.now() + ms;
  while (!predicate()) {
    if (performance.now() > end) throw new Error("timed out");
    await new Promise(r => setTimeout(r, 10));
  }
};
(async () => {
  const pc = new RTCPeerConnection();
  pc.addTransceiver("video", { direction: "recvonly" });
  const echo = pc.createDataChannel("echo", { protocol: "screencast-echo" });
  const big = pc.createDataChannel("big");
  echo.binaryType = "arraybuffer";
  const echoes = [];
  echo.onmessage = e => echoes.push(typeof e.data === "string" ? "s:" + e.data.length : "b:" + e.data.byteLength);
  await pc.setLocalDescription(await pc.createOffer());
  await waitFor(() => pc.iceGatheringState === "complete", 5000);
  const response = await fetch("/whep", { method: "POST", headers: { "Content-Type": "application/sdp" }, body: pc.localDescription.sdp });
  if (response.status !== 201) throw new Error("POST answered " + response.status);
  await pc.setRemoteDescription({ type: "answer", sdp: await response.text() });
  await waitFor(() => echo.readyState === "open" && big.readyState === "open", 10000);
  echo.send("hello from chromium");
  echo.send(new Uint8Array([1, 2, 3]));
  echo.send("x".repeat(65536));
  echo.send(new Uint8Array(262144));
  await waitFor(() => echoes.length >= 4, 10000);
  // 20 round trips of a short string, one at a time (reported, not judged: figures belong in tools/bench).
  const rtts = [];
  for (let i = 0; i < 20; i++) {
    const sent = performance.now();
    const back = new Promise(resolve => echo.addEventListener("message", resolve, { once: true }));
    echo.send("ping " + i);
    await back;  // the event itself, not a poll (a 10-ms poll would be all the test measured)
    rtts.push(performance.now() - sent);
  }
  rtts.sort((a, b) => a - b);
  echoes.length = 4;
  let refused = null;
  try { big.send(new Uint8Array(262145)); } catch (e) { refused = e.name; }
  let framesDecoded = 0;
  (await pc.getStats()).forEach(s => { if (s.type === "inbound-rtp" && s.kind === "video") framesDecoded = s.framesDecoded || 0; });
  const maxMessageSize = pc.sctp ? pc.sctp.maxMessageSize : null;
  pc.close();
  done({ echoes, refused, maxMessageSize, framesDecoded, rttMedianMs: rtts[10], rttMaxMs: rtts[19], error: null });
})().catch(e => done({ error: String(e) }));
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--profile", required=True)
    parser.add_argument("--timeout", type=float, default=30)
    args = parser.parse_args()
    browser = start_browser(args.profile)
    try:
        browser.set_script_timeout(args.timeout)
        browser.get(args.url + "/stats")
        result = browser.execute_async_script(SCRIPT)
    except Exception as error:
        result = {"error": repr(error)}
    finally:
        browser.quit()
    print(json.dumps(result))


main()
