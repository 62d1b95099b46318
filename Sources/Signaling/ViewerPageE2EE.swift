/// The viewer page's end-to-end decryption: a dedicated Worker that decrypts the call's frames, and the
/// page's side of it (the key from the URL fragment or typed in, the "encrypted — enter the key" state, the
/// lock in the overlay). Both are inlined into ``ViewerPage/html`` (the worker through a Blob URL), so the
/// page stays one self-contained file.
///
/// Format: the webrtc-sdk FrameCryptor trailer (FrameCrypto's `FrameCryptorFormat`), VP8:
/// `clear header (10 bytes on keyframes, 3 on delta frames; RFC 6386 §9.1) ‖ AES-GCM(rest), the header as
/// additional data ‖ 16-byte tag ‖ 12-byte IV ‖ 12 ‖ key index`; Opus (the sound's receiver, decrypted by
/// the same worker with the same keys): the same with a 1-byte clear prefix, the TOC byte (RFC 6716 §3.1). Keys: PBKDF2-HMAC-SHA256 of the passphrase,
/// the call's ratchet salt (`data-e2ee-salt`), 100 000 iterations, AES-128 (WebCrypto `deriveKey`).
///
/// Where the transform is set matters (Chromium 156): on the receiver right after `addTransceiver`, before
/// the offer; one set in `ontrack` is ignored. `RTCRtpScriptTransform` when the browser has it, else
/// `createEncodedStreams()` on a peer connection made with `encodedInsertableStreams: true` (the page's
/// `?e2ee-api=encoded-streams` forces that path, for tests). Frames that do not decrypt are dropped, never
/// shown as garbage.
enum ViewerPageE2EE {
    /// The Worker's script (runs in a dedicated worker; no DOM, no external resources).
    ///
    /// Messages in: `{type: "salt", salt}`, `{type: "key", passphrase}` (up to 4 kept, newest tried first for
    /// a key index without a working key), `{type: "streams", readable, writable, kind}` (the encoded-streams
    /// path; `kind` "audio" or "video"; a script transform says its kind in its options). Out, every 500 ms:
    /// `{type: "counts", received, decrypted, failed, noKey, malformed, keyIndex, keyframes, heldBack,
    /// failedKeyIndex, switches: [{keyIndex, keyframe, afterFrames}], keyframeRequests, audio: {received,
    /// decrypted, failed, noKey, malformed, keyIndex}}` (the top-level counts are the video's). Opus packets
    /// that do not decrypt are dropped (the decoder conceals them); there is nothing to hold back.
    ///
    /// After a frame was dropped (no key, wrong key, malformed) decrypted delta frames are held back until a
    /// keyframe (they lack their reference), with a keyframe request (`sendKeyFrameRequest`, at most one a
    /// second) where the transform has it; the decoder never gets a frame it cannot use.
    static let worker: String = #"""
        "use strict";
        const keys = [];
        const working = new Map();
        let salt = "LKFrameEncryptionKey";
        const counts = { type: "counts", received: 0, decrypted: 0, failed: 0, noKey: 0, malformed: 0, keyIndex: null,
          keyframes: 0, heldBack: 0, failedKeyIndex: null, switches: [], keyframeRequests: 0,
          audio: { received: 0, decrypted: 0, failed: 0, noKey: 0, malformed: 0, keyIndex: null } };
        let dropped = false, lastRequest = 0;
        const text = new TextEncoder();

        async function deriveKey(passphrase) {
          const material = await crypto.subtle.importKey("raw", text.encode(passphrase), "PBKDF2", false, ["deriveKey"]);
          return crypto.subtle.deriveKey({ name: "PBKDF2", hash: "SHA-256", salt: text.encode(salt), iterations: 100000 },
            material, { name: "AES-GCM", length: 128 }, false, ["decrypt"]);
        }

        function askForKeyframe(transformer) {
          const now = Date.now();
          if (!transformer || typeof transformer.sendKeyFrameRequest !== "function" || now - lastRequest < 1000) return;
          lastRequest = now;
          counts.keyframeRequests++;
          transformer.sendKeyFrameRequest().catch(() => {});
        }

        // Opus: the TOC byte (RFC 6716 §3.1) is clear; nothing else differs from the video's format.
        async function decryptAudio(frame, controller) {
          const audio = counts.audio;
          audio.received++;
          const data = new Uint8Array(frame.data);
          if (data.length < 31 || data[data.length - 2] !== 12) { audio.malformed++; return; }
          const index = data[data.length - 1];
          const preferred = working.get(index);
          const candidates = preferred ? [preferred].concat(keys.filter((key) => key !== preferred)) : keys.slice().reverse();
          if (candidates.length === 0) { audio.noKey++; return; }
          const header = data.subarray(0, 1);
          const iv = data.slice(data.length - 14, data.length - 2);
          const sealed = data.subarray(1, data.length - 14);
          for (const key of candidates) {
            let plain;
            try {
              plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData: header, tagLength: 128 }, key, sealed);
            } catch (error) {
              continue;
            }
            working.set(index, key);
            audio.decrypted++;
            audio.keyIndex = index;
            const out = new Uint8Array(1 + plain.byteLength);
            out[0] = data[0];
            out.set(new Uint8Array(plain), 1);
            frame.data = out.buffer;
            controller.enqueue(frame);
            return;
          }
          audio.failed++;
        }

        async function decrypt(frame, controller, transformer) {
          counts.received++;
          const data = new Uint8Array(frame.data);
          const clear = data.length > 0 && (data[0] & 1) === 0 ? 10 : 3;
          if (data.length < clear + 30 || data[data.length - 2] !== 12) { counts.malformed++; dropped = true; return; }
          const index = data[data.length - 1];
          const preferred = working.get(index);
          const candidates = preferred ? [preferred].concat(keys.filter((key) => key !== preferred)) : keys.slice().reverse();
          if (candidates.length === 0) { counts.noKey++; counts.failedKeyIndex = index; dropped = true; return; }
          const header = data.subarray(0, clear);
          const iv = data.slice(data.length - 14, data.length - 2);
          const sealed = data.subarray(clear, data.length - 14);
          for (const key of candidates) {
            let plain;
            try {
              plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData: header, tagLength: 128 }, key, sealed);
            } catch (error) {
              continue;
            }
            working.set(index, key);
            counts.decrypted++;
            const keyframe = clear === 10;
            // After a dropped frame a delta frame lacks its reference: hold it back until a keyframe.
            if (dropped && !keyframe) { counts.heldBack++; askForKeyframe(transformer); return; }
            dropped = false;
            if (counts.keyIndex !== index) {
              counts.switches.push({ keyIndex: index, keyframe, afterFrames: counts.decrypted - 1 });
              if (counts.switches.length > 32) counts.switches.shift();
            }
            counts.keyIndex = index;
            if (keyframe) counts.keyframes++;
            const out = new Uint8Array(clear + plain.byteLength);
            out.set(header, 0);
            out.set(new Uint8Array(plain), clear);
            frame.data = out.buffer;
            controller.enqueue(frame);
            return;
          }
          counts.failed++;
          counts.failedKeyIndex = index;
          dropped = true;
        }

        function pipe(readable, writable, transformer, kind) {
          const transform = kind === "audio" ? (frame, controller) => decryptAudio(frame, controller)
            : (frame, controller) => decrypt(frame, controller, transformer);
          readable.pipeThrough(new TransformStream({ transform })).pipeTo(writable).catch(() => {});
        }

        self.onrtctransform = (event) => pipe(event.transformer.readable, event.transformer.writable, event.transformer,
          (event.transformer.options || {}).kind);
        self.onmessage = async (event) => {
          const message = event.data || {};
          if (message.type === "salt" && message.salt) {
            salt = message.salt;
          } else if (message.type === "key" && message.passphrase) {
            keys.push(await deriveKey(message.passphrase));
            if (keys.length > 4) keys.shift();
          } else if (message.type === "streams") {
            pipe(message.readable, message.writable, null, message.kind);
          }
        };
        setInterval(() => self.postMessage(counts), 500);

        """#

    /// The page's e2ee functions, inlined into its script (they use its `viewer` and `document`).
    static let pageScript: String = #"""
          // End-to-end encryption (data-e2ee="on"): frames are decrypted in a Worker; the key comes from the
          // URL fragment (#key=…, never sent to the server) or is typed into the page.
          const e2ee = { enabled: document.body.dataset.e2ee === "on", worker: null, passphrases: [], counts: null,
            state: "off", mode: null, forceEncodedStreams: params.get("e2ee-api") === "encoded-streams" };
          viewer.e2ee = e2ee;
          const e2eePanel = document.getElementById("e2ee");
          const e2eeMessages = {
            "no-key": "This screen is end-to-end encrypted \u2014 enter the key",
            "wrong-key": "The key does not match \u2014 enter the key",
            "key-changed": "The call changed its key \u2014 enter the new key",
            checking: "Checking the key\u2026",
            unsupported: "This screen is end-to-end encrypted, and this browser cannot decrypt it",
          };

          // What the status line says once connected: "live" only when the picture can be shown.
          const e2eeStatus = {
            "no-key": "connected \u2014 cannot decrypt: no key",
            "wrong-key": "connected \u2014 cannot decrypt: wrong key",
            "key-changed": "connected \u2014 cannot decrypt: the key changed",
            checking: "connected \u2014 checking the key",
            unsupported: "connected \u2014 this browser cannot decrypt",
          };

          function connectedStatus() {
            return (e2ee.enabled && e2eeStatus[e2ee.state]) || sharerStatus[sharer.state] || "live";
          }

          function setE2EEState(state) {
            if (e2ee.state === state) return;
            e2ee.state = state;
            document.body.dataset.e2eeState = state;
            document.getElementById("e2ee-message").textContent = e2eeMessages[state] || "";
            e2eePanel.hidden = !(state in e2eeMessages);
            document.getElementById("e2ee-entry").hidden = state === "unsupported";
            if (statusEl.dataset.state === "connected") setStatus(connectedStatus(), "connected");
          }

          function e2eeWorker() {
            if (!e2ee.worker) {
              const source = document.getElementById("e2ee-worker").textContent;
              e2ee.worker = new Worker(URL.createObjectURL(new Blob([source], { type: "text/javascript" })));
              e2ee.worker.onmessage = (event) => { if (event.data && event.data.type === "counts") onE2EECounts(event.data); };
              e2ee.worker.postMessage({ type: "salt", salt: document.body.dataset.e2eeSalt || "LKFrameEncryptionKey" });
            }
            return e2ee.worker;
          }

          function addPassphrase(passphrase) {
            if (!passphrase || e2ee.passphrases.includes(passphrase)) return;
            e2ee.passphrases.push(passphrase);
            if (e2ee.passphrases.length > 4) e2ee.passphrases.shift();
            e2eeWorker().postMessage({ type: "key", passphrase });
            if (e2ee.state !== "decrypting" && e2ee.state !== "unsupported") setE2EEState("checking");
          }

          function usesScriptTransform() {
            return typeof RTCRtpScriptTransform !== "undefined" && !e2ee.forceEncodedStreams;
          }

          function peerConfiguration() {
            return e2ee.enabled && !usesScriptTransform() ? { encodedInsertableStreams: true } : {};
          }

          // On the video's receiver and the sound's ("audio": Opus, 1 clear byte), one worker and one key ring.
          function attachDecryptor(transceiver, kind) {
            if (!e2ee.enabled) return;
            const receiver = transceiver.receiver;
            if (usesScriptTransform()) {
              receiver.transform = new RTCRtpScriptTransform(e2eeWorker(), { operation: "decrypt", kind: kind || "video" });
              e2ee.mode = "script-transform";
            } else if (typeof receiver.createEncodedStreams === "function") {
              const streams = receiver.createEncodedStreams();
              e2eeWorker().postMessage({ type: "streams", readable: streams.readable, writable: streams.writable,
                kind: kind || "video" }, [streams.readable, streams.writable]);
              e2ee.mode = "encoded-streams";
            } else {
              setE2EEState("unsupported");
            }
          }

          // The worker holds delta frames back until a keyframe under the key it now has (a key typed in, or one
          // the call rotated to): say so to the call (POST on the WHEP session), which sends one at once instead
          // of when this viewer's spaced-out keyframe requests are next let through (up to 16 s after a while
          // without the key). The call honours it once per 10 s; the page asks no more often.
          function requestFreshKeyframe() {
            const now = Date.now();
            if (!viewer.sessionURL || now - (e2ee.lastKeyframeHint || 0) < 10000) return;
            e2ee.lastKeyframeHint = now;
            fetch(viewer.sessionURL, { method: "POST", headers: authHeaders({}) }).catch(() => {});
          }

          function onE2EECounts(counts) {
            const previous = e2ee.counts || { received: 0, decrypted: 0 };
            e2ee.counts = counts;
            if ((counts.heldBack || 0) > (previous.heldBack || 0)) requestFreshKeyframe();
            if (e2ee.state === "unsupported") return;
            if (counts.decrypted > previous.decrypted) setE2EEState("decrypting");
            else if (counts.received > previous.received) {
              // Frames under a key index other than the one that worked: the call rotated to a key we lack.
              const changed = counts.decrypted > 0 && counts.failedKeyIndex !== null && counts.failedKeyIndex !== counts.keyIndex;
              setE2EEState(!e2ee.passphrases.length ? "no-key" : changed ? "key-changed" : "wrong-key");
            }
          }

          function keyFromFragment() {
            const match = /(?:^#|&)key=([^&]*)/.exec(location.hash);
            if (!match) return "";
            try { return decodeURIComponent(match[1]); } catch (error) { return match[1]; }
          }

          function e2eeSummary() {
            if (!e2ee.enabled) return { state: "off" };
            return Object.assign({ state: e2ee.state, mode: e2ee.mode, keys: e2ee.passphrases.length }, e2ee.counts || {});
          }

          if (e2ee.enabled) {
            setE2EEState("no-key");
            addPassphrase(keyFromFragment());
            window.addEventListener("hashchange", () => addPassphrase(keyFromFragment()));
            document.getElementById("e2ee-entry").addEventListener("submit", (event) => {
              event.preventDefault();
              const input = document.getElementById("e2ee-key");
              addPassphrase(input.value);
              input.value = "";
            });
          }

        """#

    /// The panel shown while the page cannot decrypt, and the worker's script as an inert script element.
    static let markup: String = """
        <div id="e2ee" hidden>
          <div id="e2ee-message"></div>
          <form id="e2ee-entry">
            <input id="e2ee-key" type="password" autocomplete="off" spellcheck="false" placeholder="key" aria-label="key">
            <button type="submit">Unlock</button>
          </form>
        </div>
        <script id="e2ee-worker" type="text/js-worker">
        \(worker)</script>

        """

    /// The panel's look. Its lock is an SVG (a data URL), as the overlay's is: Debian's Chromium has no emoji
    /// font, and U+1F512 showed as an empty box.
    static let style: String = """
        #e2ee { position: fixed; left: 50%; top: 50%; transform: translate(-50%, -50%); max-width: 80%; padding: 18px 22px;
          background: rgba(20, 20, 20, .92); border-radius: 10px; text-align: center; }
        #e2ee[hidden] { display: none; }
        #e2ee-message { margin-bottom: 10px; font-size: 15px; }
        #e2ee-message::before { margin-right: 6px; vertical-align: -2px; content: url("data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 12 14' width='13' height='15'%3E%3Cpath d='M3.2 6.5V4.2a2.8 2.8 0 0 1 5.6 0v2.3' fill='none' stroke='%23fc3' stroke-width='1.6'/%3E%3Crect x='1' y='6' width='10' height='8' rx='1.5' fill='%23fc3'/%3E%3C/svg%3E"); }
        #e2ee input { font: inherit; color: #eee; background: #222; border: 1px solid #555; border-radius: 4px; padding: 4px 8px; }

        """

    /// `text` escaped for an HTML attribute value in double quotes.
    static func attributeEscaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "\"": out += "&quot;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
