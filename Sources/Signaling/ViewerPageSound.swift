/// The viewer page's sound (issue 28): the call's Opus track plays through the same `<video>` element as the
/// picture (one media stream, so the browser lip-syncs them from the RTCP Sender Reports). Browsers refuse to
/// autoplay sound, so the page starts muted and shows a clear "Unmute" button (key `m`) beside a level meter;
/// it says "no sound in this share" when the call's answer carried no audio (a call whose viewers get no
/// sound; with end-to-end encryption the sound comes encrypted and the e2ee worker decrypts it, see
/// ``ViewerPageE2EE``), and "silent" while the
/// sound has been quiet for ``quietAfterMs``.
///
/// The meter reads `audioLevel` (0…1, linear, RFC 6464's scale as browsers report it in `inbound-rtp`) from
/// the audio receiver's `getStats()` every 250 ms: it works while muted, without a Web Audio context (which
/// would need a user gesture). For tests: `data-sound` on the body and `#sound` (`pending`, `muted`, `on`,
/// `none`) and `window.screencastViewer.sound.stats` (`audioLevel`, `totalSamplesReceived`,
/// `concealedSamples` of the audio `inbound-rtp`).
enum ViewerPageSound {
    /// How long a level under 0.001 (−60 dBFS) lasts before the page says "silent", ms.
    static let quietAfterMs = 3000

    static let style: String = """
        #sound { display: inline-flex; align-items: center; gap: 6px; }
        #sound[data-sound="none"] #meter, #sound[data-sound="pending"] #meter { display: none; }
        #meter { width: 48px; height: 6px; background: #555; border-radius: 3px; overflow: hidden; }
        #meter > i { display: block; height: 100%; width: 0; background: #4d4; }
        #unmute[data-muted="yes"] { background: #2a6; }

        """

    static let markup: String = """
        <span id="sound" data-sound="pending"><button id="unmute" type="button" title="Sound on/off (m)" data-muted="yes" hidden>Unmute</button><span id="meter" title="sound level"><i></i></span><span id="sound-note"></span></span>
        """

    /// Runs inside the page's script: uses its `video` and `viewer`; the page's keydown handler calls
    /// `toggleSound` for `m`.
    static let pageScript: String = #"""
          const soundEl = document.getElementById("sound"), unmuteEl = document.getElementById("unmute");
          const meterEl = document.querySelector("#meter > i"), soundNoteEl = document.getElementById("sound-note");
          const sound = viewer.sound = { stats: null, quietSince: null };
          function setSound(state, note) {
            soundEl.dataset.sound = document.body.dataset.sound = state;
            soundNoteEl.textContent = note || "";
            unmuteEl.hidden = state === "none" || state === "pending";
            unmuteEl.textContent = video.muted ? "Unmute" : "Mute";
            unmuteEl.dataset.muted = video.muted ? "yes" : "no";
          }
          // The audio track joins the picture's stream on the <video> (muted until the person unmutes).
          function soundTrack(event) {
            const stream = event.streams[0], own = video.srcObject;
            if (!own) video.srcObject = stream || new MediaStream([event.track]);
            else if (!own.getTracks().includes(event.track)) own.addTrack(event.track);
            setSound(video.muted ? "muted" : "on");
          }
          function toggleSound() {
            if (soundEl.dataset.sound === "none") return;
            video.muted = !video.muted;
            video.play().catch(() => {});
            setSound(video.muted ? "muted" : "on", soundNoteEl.textContent);
          }
          unmuteEl.addEventListener("click", toggleSound);
          async function pollSound() {
            const pc = viewer.pc;
            if (!pc || pc.connectionState !== "connected") return;
            const t = pc.getTransceivers().find((t) => t.receiver.track && t.receiver.track.kind === "audio");
            if (!t || !/recv/.test(t.currentDirection || "")) {
              sound.stats = null;
              if (soundEl.dataset.sound !== "none") setSound("none", "no sound in this share");
              return;
            }
            let inbound = null;
            try { (await t.receiver.getStats()).forEach((s) => { if (s.type === "inbound-rtp") inbound = s; }); } catch (error) {}
            if (!inbound) return;
            const level = inbound.audioLevel || 0, now = performance.now();
            sound.stats = { audioLevel: level, totalSamplesReceived: inbound.totalSamplesReceived || 0,
              concealedSamples: inbound.concealedSamples || 0 };
            meterEl.style.width = Math.min(100, Math.sqrt(level) * 100).toFixed(0) + "%";  // a -20 dBFS tone: 30 %
            if (level >= 0.001) sound.quietSince = null;
            else if (sound.quietSince === null) sound.quietSince = now;
            const note = sound.quietSince !== null && now - sound.quietSince >= \#(quietAfterMs) ? "silent" : "";
            const state = video.muted ? "muted" : "on";
            if (soundEl.dataset.sound !== state || soundNoteEl.textContent !== note) setSound(state, note);
          }
          setInterval(pollSound, 250);

        """#
}
