/// The viewer page's second way in: watching the call through a Janus VideoRoom (the SFU the call publishes
/// to with `--janus`), instead of from the call itself over WHEP. Inlined into ``ViewerPage/html``.
///
/// `?janus=URL&room=N` (URL like `http://HOST:8088/janus`, the Janus HTTP API; it answers CORS requests)
/// switches the page to it. The subscriber flow of the VideoRoom plugin over the Janus HTTP API: `create` a
/// session, `attach` `janus.plugin.videoroom`, `listparticipants` of the room, `join` as a subscriber of its
/// first publisher, long-poll (`GET /janus/SESSION?maxev=5`) for the event carrying Janus's offer, answer it
/// (here the page is the answerer; the e2ee decryptor goes on the video receiver right after the offer is
/// applied, before the answer is made), `start` with the answer, `keepalive` every 25 s (Janus ends a
/// session silent for 60 s) and `destroy` when the page leaves or reconnects. A room without a publisher
/// is retried like a WHEP 404; Janus errors (`janus: "error"`, the plugin's `error_code`) are shown with
/// their code. Reconnects, stats and the overlay are the page's own, as for WHEP.
enum ViewerPageJanus {
    /// The page's Janus functions, inlined into its script (they use its `params`, `viewer`,
    /// `attachDecryptor`, `waitForGathering` and `gatherLimitMs`).
    static let pageScript: String = #"""
          // Watching through Janus (?janus=URL&room=N): the VideoRoom subscriber flow over the Janus HTTP API.
          const janus = { url: params.get("janus") ? new URL(params.get("janus"), location.href).href.replace(/\/+$/, "") : null,
            room: Number(params.get("room")) || 0, session: null, keepalive: null, publisher: null };
          viewer.janus = janus;
          async function janusPost(path, body) {
            const response = await fetch(janus.url + path, {
              method: "POST", headers: { "Content-Type": "application/json" },
              body: JSON.stringify(Object.assign({ transaction: Math.random().toString(36).slice(2) }, body)),
            });
            const reply = await response.json();
            if (reply.janus === "error") throw new Error("Janus error " + reply.error.code + ": " + reply.error.reason);
            const data = reply.plugindata && reply.plugindata.data;
            if (data && data.error_code) throw new Error("VideoRoom error " + data.error_code + ": " + data.error);
            return reply;
          }
          async function janusOffer(handle, generation, limitMs) {
            const end = performance.now() + limitMs;
            while (performance.now() < end && generation === viewer.generation) {
              const response = await fetch(janus.url + "/" + janus.session + "?maxev=5&rid=" + Date.now());
              for (const event of [].concat(await response.json())) {
                if (event.sender !== handle) continue;
                const data = event.plugindata && event.plugindata.data;
                if (data && data.error_code) throw new Error("VideoRoom error " + data.error_code + ": " + data.error);
                if (event.jsep && event.jsep.type === "offer") return event.jsep;
              }
            }
            throw new Error("no offer from Janus within " + limitMs / 1000 + " s");
          }
          async function janusSubscribe(pc, generation) {
            const session = (await janusPost("", { janus: "create" })).data.id;
            janus.session = session;
            janus.keepalive = setInterval(() => { janusPost("/" + session, { janus: "keepalive" }).catch(() => {}); }, 25000);
            const handle = (await janusPost("/" + session, { janus: "attach", plugin: "janus.plugin.videoroom" })).data.id;
            const path = "/" + session + "/" + handle;
            const listed = await janusPost(path, { janus: "message", body: { request: "listparticipants", room: janus.room } });
            const publishers = (listed.plugindata.data.participants || []).filter((participant) => participant.publisher);
            if (!publishers.length) {
              const error = new Error("no publisher in Janus room " + janus.room);
              error.status = 404;
              throw error;
            }
            janus.publisher = publishers[0].display || String(publishers[0].id);
            await janusPost(path, { janus: "message",
              body: { request: "join", ptype: "subscriber", room: janus.room, streams: [{ feed: publishers[0].id }] } });
            const offer = await janusOffer(handle, generation, 10000);
            if (generation !== viewer.generation) return;
            await pc.setRemoteDescription(offer);
            // The decryptor goes on the receiver now, before the answer (Janus sends media after "start").
            const video = pc.getTransceivers().find((transceiver) => transceiver.receiver.track.kind === "video");
            if (video) attachDecryptor(video);
            await pc.setLocalDescription(await pc.createAnswer());
            await waitForGathering(pc, gatherLimitMs);
            if (generation !== viewer.generation) return;
            await janusPost(path, { janus: "message", body: { request: "start", room: janus.room },
              jsep: { type: "answer", sdp: pc.localDescription.sdp } });
          }
          function janusTeardown() {
            clearInterval(janus.keepalive);
            janus.keepalive = null;
            if (janus.session) {
              fetch(janus.url + "/" + janus.session, { method: "POST", headers: { "Content-Type": "application/json" }, keepalive: true,
                body: JSON.stringify({ janus: "destroy", transaction: "leave" }) }).catch(() => {});
            }
            janus.session = null;
          }

        """#
}
