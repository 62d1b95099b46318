// The glass-to-glass reader (tools/bench --phases g2g), injected by g2g_browser.py into the call's viewer
// page and into Chrome's own anchor page (g2g_anchor.html).
//
// installG2GReader(video, layout, peerConnection) watches `video` with requestVideoFrameCallback: for each
// presented frame it draws the painter's code area (layout: the screen's size and the code's place on it,
// in screen pixels, and glasscode's CELL, COLUMNS, ROWS) from the frame to a canvas at the code's own size,
// and keeps the mean luma (BT.601 weights, 0-255) of the inner half of each cell as two hex digits, beside
// the frame's metadata. Times are DOMHighResTimeStamps (ms on the page's performance timeline; wall clock =
// performance.timeOrigin + t). glasscode.py decodes the cells; nothing is judged here.
//
// window.g2g.begin() starts a window (samples cleared, getStats read); window.g2g.end() resolves to
// { samples: [[cells, callbackNow, presentationTime, expectedDisplayTime, receiveTime|null,
//   captureTime|null, presentedFrames, rtpTimestamp|null, width, height], ...], timeOrigin,
//   clockSkewMs: the largest |Date.now() - (timeOrigin + performance.now())| seen, stats: inbound-rtp deltas
//   over the window (framesDecoded, framesDropped, jitterBufferDelay and jitterBufferEmittedCount in s and
//   frames, bytesReceived, totalDecodeTime s), jitterBufferTarget: the receiver's setting (ms, or null) }.
"use strict";

window.installG2GReader = function (video, layout, peerConnection) {
  const codeWidth = layout.columns * layout.cell, codeHeight = layout.rows * layout.cell;
  const canvas = document.createElement("canvas");
  canvas.width = codeWidth;
  canvas.height = codeHeight;
  const context = canvas.getContext("2d", { willReadFrequently: true });
  let samples = [], recording = false, skew = 0, before = null;

  function cellsOf() {
    const scaleX = video.videoWidth / layout.screenWidth, scaleY = video.videoHeight / layout.screenHeight;
    context.drawImage(video, layout.codeX * scaleX, layout.codeY * scaleY, codeWidth * scaleX, codeHeight * scaleY,
      0, 0, codeWidth, codeHeight);
    const data = context.getImageData(0, 0, codeWidth, codeHeight).data;
    const quarter = layout.cell >> 2;
    let hex = "";
    for (let row = 0; row < layout.rows; row++) {
      for (let column = 0; column < layout.columns; column++) {
        let total = 0, count = 0;
        const x0 = column * layout.cell + quarter, y0 = row * layout.cell + quarter;
        for (let y = y0; y < y0 + layout.cell - 2 * quarter; y++) {
          for (let x = x0; x < x0 + layout.cell - 2 * quarter; x++) {
            const i = (y * codeWidth + x) * 4;
            total += 0.299 * data[i] + 0.587 * data[i + 1] + 0.114 * data[i + 2];
            count++;
          }
        }
        hex += Math.round(total / count).toString(16).padStart(2, "0");
      }
    }
    return hex;
  }

  function onFrame(now, metadata) {
    if (recording && video.videoWidth) {
      const cells = cellsOf();
      const at = performance.now();
      skew = Math.max(skew, Math.abs(Date.now() - (performance.timeOrigin + at)));
      samples.push([cells, at, metadata.presentationTime, metadata.expectedDisplayTime,
        metadata.receiveTime ?? null, metadata.captureTime ?? null, metadata.presentedFrames,
        metadata.rtpTimestamp ?? null, metadata.width, metadata.height]);
    }
    video.requestVideoFrameCallback(onFrame);
  }
  video.requestVideoFrameCallback(onFrame);

  async function inbound() {
    const pc = peerConnection();
    if (!pc) return null;
    let found = null;
    (await pc.getStats()).forEach((s) => { if (s.type === "inbound-rtp" && s.kind === "video") found = s; });
    return found;
  }

  window.g2g = {
    async begin() {
      samples = [];
      skew = 0;
      before = await inbound();
      recording = true;
    },
    async end() {
      recording = false;
      const after = await inbound();
      const keys = ["framesDecoded", "framesDropped", "framesReceived", "jitterBufferDelay", "jitterBufferEmittedCount",
        "bytesReceived", "totalDecodeTime", "packetsLost", "nackCount", "pliCount"];
      const stats = {};
      for (const key of keys) {
        if (after && after[key] !== undefined) stats[key] = after[key] - ((before && before[key]) || 0);
      }
      const pc = peerConnection();
      const receiver = pc && pc.getReceivers()[0];
      return { samples, timeOrigin: performance.timeOrigin, clockSkewMs: skew, stats,
        jitterBufferTarget: receiver && "jitterBufferTarget" in receiver ? receiver.jitterBufferTarget : null };
    },
  };
};
