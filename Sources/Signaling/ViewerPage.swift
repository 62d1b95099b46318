/// The viewer page served at `GET /`: one self-contained HTML file (inline CSS and JS, no external
/// resources) that plays the call over WHEP.
///
/// - A full-window `<video muted autoplay playsinline>` (muted, or browsers keep an autoplaying video paused).
/// - WHEP client (draft-ietf-wish-whep; RFC 9725 §4.2 shapes): a recvonly video transceiver, the offer
///   after ICE gathering completes or 2 s pass (Chromium may never finish gathering on loopback), `POST`
///   to the endpoint with `Content-Type: application/sdp`, the 201's body as the answer, the `Location`
///   resolved against the endpoint URL and `DELETE`d when the page leaves or reconnects.
/// - Reconnects with exponential back-off (0.5 s doubling to 30 s, ±20 % jitter; 30 s after a 4xx other
///   than 404/408/429) when the POST fails, the connection fails, closes or stays disconnected for 5 s, or
///   no media arrives for 15 s while connected (a call that restarted: its ICE consent lapses); the back-off
///   resets once connected.
/// - An overlay with resolution, fps, bitrate and RTT (selected candidate pair) from `getStats()` each
///   second, a fullscreen button (also double-click, key `f`) and a picture-in-picture button (key `p`);
///   while decrypting end to end, a lock (an inline SVG, `#lock`: no emoji font needed) and the key index.
///   While the picture is live the overlay fades out (0.4 s) once the pointer has been still for
///   `idleAfterMs` (3 000 ms, counted from the page's start too) and comes back at once on a pointer move,
///   a touch, a key, or while the pointer is over it or focus is in it (`body.idle` marks the faded state).
/// - Low latency: the receiver's `jitterBufferTarget` (and Chromium's `playoutDelayHint`) is 0, and the call
///   writes the playout-delay header extension (MIN = MAX = 0) when the offer has it.
/// - Query parameters: `?token=T` (sent as `Authorization: Bearer T`), `?whep=URL` (another endpoint),
///   `?janus=URL&room=N` (watch through that Janus VideoRoom instead, ``ViewerPageJanus``),
///   `?e2ee-api=encoded-streams` (decrypt through `createEncodedStreams`, for tests). Fragment: `#key=K`, the
///   end-to-end key (see ``html(sourceFramesPerSecond:sourceSendsOnlyChanges:e2eeSalt:)``), which browsers never send to the server.
/// - Sound (``ViewerPageSound``): a recvonly audio transceiver after the video's; the page starts muted with an
///   "Unmute" button (key `m`), a level meter, and says when the share has no sound.
/// - For tests: `<body data-viewer="ready">` once the script has run, `data-state` on `#status` and the body
///   (`connecting`, `negotiated`, `connected`, `retrying`; once connected the text is "live" only when the
///   picture can be shown: with e2ee and no working key it says "connected — cannot decrypt: …" and
///   `data-blocked="yes"`; while the call says (`GET /source`, polled every 2 s) that nothing is shared it says
///   "waiting for the sharer", "sharing paused" or "sharing ended", also blocked; `data-sharer` on the body),
///   and `window.screencastViewer` with the peer
///   connection, the session URL and `lastStats` (`width`, `height`, `fps`, `kbps`, `rttMs`,
///   `framesDecoded`, `bytesReceived`, `packetsLost`, `e2ee`: the decryptor's state and counts).
public enum ViewerPage {
    /// The page, telling the overlay the most frames a second the call encodes (`data-source-fps` on the
    /// body, frames per second; 0 when unknown): below 80 % of it the overlay adds "only changes are sent",
    /// so a low rate on a still screen does not look like a fault, but only when `sourceSendsOnlyChanges`
    /// (`data-source-changes-only="yes"`: the screen, whose agent sends only what changed); a source that
    /// changes every frame (the test pattern) running slow is not a still screen, so it gets no such hint.
    ///
    /// With `e2eeSalt` (the call encrypts frames end to end, `--e2ee-key-file`), the body says
    /// `data-e2ee="on"` and carries the ratchet salt in `data-e2ee-salt`: the page then decrypts in a Worker
    /// (``ViewerPageE2EE``) with the key from `#key=…` or typed in, and shows `data-e2ee-state` (`no-key`,
    /// `checking`, `wrong-key`, `key-changed`, `decrypting`, `unsupported`) on the body.
    public static func html(sourceFramesPerSecond: Double?, sourceSendsOnlyChanges: Bool = true, e2eeSalt: String? = nil) -> String {
        var page = html
        if !sourceSendsOnlyChanges {
            page = page.replacingOccurrences(of: "data-source-changes-only=\"yes\"", with: "data-source-changes-only=\"no\"")
        }
        if let fps = sourceFramesPerSecond, fps > 0 {
            page = page.replacingOccurrences(of: "data-source-fps=\"0\"", with: "data-source-fps=\"\(fps)\"")
        }
        if let salt = e2eeSalt {
            page = page.replacingOccurrences(
                of: "data-e2ee=\"off\"", with: "data-e2ee=\"on\" data-e2ee-salt=\"\(ViewerPageE2EE.attributeEscaped(salt))\"")
        }
        return page
    }

    /// The page with no source frame rate.
    public static let html: String = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>screencast</title>
        <style>
        html, body { margin: 0; height: 100%; background: #000; color: #eee; overflow: hidden;
          font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; }
        video { position: fixed; inset: 0; width: 100%; height: 100%; object-fit: contain; background: #000; }
        #bar { position: fixed; left: 8px; bottom: 8px; display: flex; gap: 10px; align-items: center; padding: 4px 8px;
          background: rgba(0, 0, 0, .6); border-radius: 6px; transition: opacity .4s; }
        body.idle[data-state="connected"] #bar { opacity: 0; }
        #bar:hover, #bar:focus-within { opacity: 1 !important; }
        #lock { display: inline-flex; margin-right: -6px; color: #4d4; }
        #lock[hidden] { display: none; }
        #status::before { content: "●"; margin-right: 5px; color: #888; }
        #status[data-state="connecting"]::before, #status[data-state="negotiated"]::before { color: #fc3; }
        #status[data-state="connected"]::before { color: #4d4; }
        #status[data-state="connected"][data-blocked="yes"]::before { color: #fc3; }
        #status[data-state="retrying"]::before { color: #e44; }
        #stats { font-variant-numeric: tabular-nums; color: #bbb; }
        button { font: inherit; color: inherit; background: rgba(255, 255, 255, .15); border: 0; border-radius: 4px;
          padding: 3px 8px; cursor: pointer; }
        button:hover { background: rgba(255, 255, 255, .3); }
        button[hidden] { display: none; }
        \#(ViewerPageE2EE.style)\#(ViewerPageSound.style)</style>
        </head>
        <body data-viewer="loading" data-source-fps="0" data-source-changes-only="yes" data-e2ee="off">
        <video id="video" muted autoplay playsinline></video>
        <div id="bar">
          <span id="status" data-state="idle">starting</span>
          <span id="lock" hidden title="end-to-end encrypted"><svg viewBox="0 0 12 14" width="11" height="13" aria-hidden="true"><path d="M3.2 6.5V4.2a2.8 2.8 0 0 1 5.6 0v2.3" fill="none" stroke="currentColor" stroke-width="1.6"/><rect x="1" y="6" width="10" height="8" rx="1.5" fill="currentColor"/></svg></span>
          <span id="stats"></span>
          \#(ViewerPageSound.markup)
          <button id="fullscreen" type="button" title="Fullscreen (f)">Fullscreen</button>
          <button id="pip" type="button" title="Picture in picture (p)">PiP</button>
        </div>
        \#(ViewerPageE2EE.markup)        <script>
        "use strict";
        (() => {
          const params = new URLSearchParams(location.search);
          const token = params.get("token") || "";
          const whepURL = new URL(params.get("whep") || "/whep", location.href).href;
          const video = document.getElementById("video");
          const statusEl = document.getElementById("status");
          const statsEl = document.getElementById("stats");
          const lockEl = document.getElementById("lock");
          const gatherLimitMs = 2000, disconnectLimitMs = 5000, stallLimitMs = 15000, maxBackoffMs = 30000;
          const viewer = { pc: null, sessionURL: null, attempt: 0, generation: 0, retryTimer: null,
            disconnectTimer: null, lastStats: null, previous: null, lastProgress: 0, whepURL };
          window.screencastViewer = viewer;
          // What the call says of the sharer (GET /source every 2 s): the status says "live" only while pictures come.
          const sharer = { state: "live" };
          const sharerStatus = { waiting: "waiting for the sharer", paused: "sharing paused", ended: "sharing ended" };
        \#(ViewerPageE2EE.pageScript)
        \#(ViewerPageJanus.pageScript)
        \#(ViewerPageSound.pageScript)
          function authHeaders(extra) {
            const headers = Object.assign({}, extra);
            if (token) headers["Authorization"] = "Bearer " + token;
            return headers;
          }

          function setStatus(text, state) {
            statusEl.textContent = text;
            statusEl.dataset.state = state;
            // Connected but not showing the picture (e2ee without the right key): not green.
            statusEl.dataset.blocked = state === "connected" && text !== "live" ? "yes" : "no";
            document.body.dataset.state = state;
          }

          function waitForGathering(pc, limitMs) {
            if (pc.iceGatheringState === "complete") return Promise.resolve();
            return new Promise((resolve) => {
              const finish = () => {
                clearTimeout(timer);
                pc.removeEventListener("icegatheringstatechange", check);
                resolve();
              };
              const check = () => { if (pc.iceGatheringState === "complete") finish(); };
              const timer = setTimeout(finish, limitMs);
              pc.addEventListener("icegatheringstatechange", check);
            });
          }

          // A screen is not a conversation: no jitter-buffer smoothing, each frame is shown once decoded
          // (jitterBufferTarget ms, WebRTC Extensions §6; Chromium's older playoutDelayHint, seconds).
          function showAtOnce(receiver) {
            try {
              if ("jitterBufferTarget" in receiver) receiver.jitterBufferTarget = 0;
              if ("playoutDelayHint" in receiver) receiver.playoutDelayHint = 0;
            } catch (error) {}
          }

          function deleteSession(url) {
            if (!url) return;
            fetch(url, { method: "DELETE", headers: authHeaders({}), keepalive: true }).catch(() => {});
          }

          function teardown() {
            clearTimeout(viewer.disconnectTimer);
            viewer.disconnectTimer = null;
            deleteSession(viewer.sessionURL);
            viewer.sessionURL = null;
            if (janus.url) janusTeardown();
            if (viewer.pc) {
              viewer.pc.onconnectionstatechange = null;
              viewer.pc.ontrack = null;
              viewer.pc.close();
              viewer.pc = null;
            }
            viewer.previous = null;
          }

          async function connect() {
            clearTimeout(viewer.retryTimer);
            const generation = ++viewer.generation;
            teardown();
            setStatus(viewer.attempt ? "reconnecting" : "connecting", "connecting");
            let pc;
            try {
              pc = new RTCPeerConnection(peerConfiguration());
              viewer.pc = pc;
              pc.ontrack = (event) => {
                if (event.track.kind === "audio") return soundTrack(event);  // ViewerPageSound
                showAtOnce(event.receiver);  // also the receiver a Janus offer made
                const stream = event.streams[0] || new MediaStream([event.track]);
                if (video.srcObject !== stream) video.srcObject = stream;
                video.play().catch(() => {});
              };
              pc.onconnectionstatechange = () => onConnectionState(pc, generation);
              if (janus.url) {
                await janusSubscribe(pc, generation);
                viewer.lastProgress = performance.now();
                if (generation === viewer.generation && pc.connectionState !== "connected") setStatus("negotiating", "negotiated");
                return;
              }
              // The decryptor goes on the receiver now, before the offer (set in ontrack, Chromium ignores it).
              const transceiver = pc.addTransceiver("video", { direction: "recvonly" });
              attachDecryptor(transceiver);
              showAtOnce(transceiver.receiver);
              // The call's sound (ViewerPageSound), decrypted like the pictures with e2ee.
              attachDecryptor(pc.addTransceiver("audio", { direction: "recvonly" }), "audio");
              await pc.setLocalDescription(await pc.createOffer());
              await waitForGathering(pc, gatherLimitMs);
              if (generation !== viewer.generation) return;
              const response = await fetch(whepURL, {
                method: "POST",
                headers: authHeaders({ "Content-Type": "application/sdp" }),
                body: pc.localDescription.sdp,
              });
              const body = await response.text();
              if (response.status !== 201) {
                const error = new Error("HTTP " + response.status + " " + body.trim().slice(0, 120));
                error.status = response.status;
                throw error;
              }
              const location = response.headers.get("Location");
              const sessionURL = location ? new URL(location, whepURL).href : null;
              if (generation !== viewer.generation) { deleteSession(sessionURL); return; }
              viewer.sessionURL = sessionURL;
              await pc.setRemoteDescription({ type: "answer", sdp: body });
              viewer.lastProgress = performance.now();
              if (pc.connectionState !== "connected") setStatus("negotiating", "negotiated");
            } catch (error) {
              if (generation === viewer.generation) fail(String((error && error.message) || error), error && error.status);
            }
          }

          function onConnectionState(pc, generation) {
            if (generation !== viewer.generation) return;
            const state = pc.connectionState;
            if (state === "connected") {
              clearTimeout(viewer.disconnectTimer);
              viewer.disconnectTimer = null;
              viewer.attempt = 0;
              viewer.lastProgress = performance.now();
              setStatus(connectedStatus(), "connected");
            } else if (state === "disconnected") {
              setStatus("connection interrupted", "negotiated");
              clearTimeout(viewer.disconnectTimer);
              viewer.disconnectTimer = setTimeout(() => {
                if (generation === viewer.generation && pc.connectionState !== "connected") fail("connection lost");
              }, disconnectLimitMs);
            } else if (state === "failed" || state === "closed") {
              fail("connection " + state);
            }
          }

          function fail(reason, status) {
            viewer.generation++;
            teardown();
            const permanent = status >= 400 && status < 500 && status !== 404 && status !== 408 && status !== 429;
            const base = permanent ? maxBackoffMs : Math.min(maxBackoffMs, 500 * Math.pow(2, viewer.attempt));
            const delay = Math.round(base * (0.8 + 0.4 * Math.random()));
            viewer.attempt++;
            // 401: the call no longer takes this link's token (it was restarted with a new one): say so plainly.
            const said = status === 401 ? "this link is no longer valid: ask the sharer for a new one"
              : sharer.state === "ended" ? "sharing ended" : reason;
            setStatus(said + "; retrying in " + Math.ceil(delay / 1000) + " s", "retrying");
            clearTimeout(viewer.retryTimer);
            viewer.retryTimer = setTimeout(connect, delay);
          }

          async function pollStats() {
            const pc = viewer.pc;
            if (!pc || pc.connectionState === "closed") return;
            let report;
            try { report = await pc.getStats(); } catch (error) { return; }
            if (pc !== viewer.pc) return;
            let inbound = null, pair = null, selectedPairId = null;
            report.forEach((stat) => {
              if (stat.type === "inbound-rtp" && (stat.kind || stat.mediaType) === "video") inbound = stat;
              else if (stat.type === "transport" && stat.selectedCandidatePairId) selectedPairId = stat.selectedCandidatePairId;
            });
            if (selectedPairId) pair = report.get(selectedPairId);
            if (!pair) report.forEach((stat) => { if (stat.type === "candidate-pair" && stat.nominated && stat.state === "succeeded") pair = stat; });
            const now = performance.now();
            const stats = {
              width: (inbound && inbound.frameWidth) || video.videoWidth || 0,
              height: (inbound && inbound.frameHeight) || video.videoHeight || 0,
              framesDecoded: (inbound && inbound.framesDecoded) || 0,
              bytesReceived: (inbound && inbound.bytesReceived) || 0,
              packetsLost: (inbound && inbound.packetsLost) || 0,
              fps: 0, kbps: 0,
              rttMs: pair && typeof pair.currentRoundTripTime === "number" ? pair.currentRoundTripTime * 1000 : null,
              time: now,
              e2ee: e2eeSummary(),
            };
            const previous = viewer.previous;
            if (previous) {
              const seconds = (now - previous.time) / 1000;
              if (seconds > 0) {
                stats.fps = inbound && typeof inbound.framesPerSecond === "number"
                  ? inbound.framesPerSecond : (stats.framesDecoded - previous.framesDecoded) / seconds;
                stats.kbps = (stats.bytesReceived - previous.bytesReceived) * 8 / seconds / 1000;
              }
              if (stats.bytesReceived > previous.bytesReceived) viewer.lastProgress = now;
            }
            viewer.previous = stats;
            viewer.lastStats = stats;
            const parts = [];
            lockEl.hidden = e2ee.state !== "decrypting";
            if (e2ee.state === "decrypting") parts.push("key " + e2ee.counts.keyIndex);
            if (stats.width && stats.height) parts.push(stats.width + "\u00d7" + stats.height);
            const sourceFps = Number(document.body.dataset.sourceFps) || 0;
            const still = document.body.dataset.sourceChangesOnly === "yes" && sourceFps > 0 && stats.framesDecoded > 0 && stats.fps < 0.8 * sourceFps;
            parts.push(stats.fps.toFixed(0) + " fps" + (still ? " \u00b7 only changes are sent" : ""));
            parts.push(stats.kbps >= 1000 ? (stats.kbps / 1000).toFixed(2) + " Mbps" : stats.kbps.toFixed(0) + " kbps");
            if (stats.rttMs !== null) parts.push("RTT " + stats.rttMs.toFixed(0) + " ms");
            statsEl.textContent = parts.join(" \u00b7 ");
            if (pc.connectionState === "connected" && now - viewer.lastProgress > stallLimitMs) fail("no media for 15 s");
          }

          function toggleFullscreen() {
            if (document.fullscreenElement) document.exitFullscreen().catch(() => {});
            else if (document.documentElement.requestFullscreen) document.documentElement.requestFullscreen().catch(() => {});
          }

          function togglePictureInPicture() {
            if (document.pictureInPictureElement) document.exitPictureInPicture().catch(() => {});
            else if (video.requestPictureInPicture) video.requestPictureInPicture().catch(() => {});
          }

          const pipButton = document.getElementById("pip");
          if (!document.pictureInPictureEnabled) pipButton.hidden = true;
          pipButton.addEventListener("click", togglePictureInPicture);
          document.getElementById("fullscreen").addEventListener("click", toggleFullscreen);
          video.addEventListener("dblclick", toggleFullscreen);
          document.addEventListener("keydown", (event) => {
            // Typing (a key into the e2ee field) is not a shortcut.
            const target = event.target;
            if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
            if (event.ctrlKey || event.metaKey || event.altKey) return;
            if (event.key === "f") toggleFullscreen();
            else if (event.key === "p" && document.pictureInPictureEnabled) togglePictureInPicture();
            else if (event.key === "m") toggleSound();  // ViewerPageSound
          });
          // The overlay fades while the pointer is still (from the start too: a pointer that never moves
          // must not leave it over the picture) and comes back on any pointer move, touch or key.
          const idleAfterMs = 3000;
          let idleTimer = null;
          function wake() {
            document.body.classList.remove("idle");
            clearTimeout(idleTimer);
            idleTimer = setTimeout(() => document.body.classList.add("idle"), idleAfterMs);
          }
          for (const type of ["pointermove", "pointerdown", "keydown"]) document.addEventListener(type, wake, { passive: true });
          wake();
          window.addEventListener("pagehide", () => { viewer.generation++; teardown(); });
          setInterval(pollStats, 1000);
          // The sharer's state; a call that no longer answers has ended (or is out of reach).
          async function pollSource() {
            let state;
            try {
              const response = await fetch(new URL("/source", location.href).href, { headers: authHeaders({}), cache: "no-store" });
              if (!response.ok) return;  // 404: a call without it; 401: the link's own status says so
              state = (await response.json()).state;
            } catch (error) {
              state = "ended";
            }
            if (!(state in sharerStatus) && state !== "live") return;
            if (state === sharer.state) return;
            sharer.state = state;
            document.body.dataset.sharer = state;
            if (statusEl.dataset.state === "connected") setStatus(connectedStatus(), "connected");
          }
          setInterval(pollSource, 2000);
          pollSource();
          document.body.dataset.viewer = "ready";
          if (typeof RTCPeerConnection === "undefined") setStatus("this browser has no WebRTC", "retrying");
          else connect();
        })();
        </script>
        </body>
        </html>

        """#
}
