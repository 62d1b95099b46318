// The glass-to-glass reader (tools/bench --phases g2g), injected by g2g_browser.py into the call's viewer
// page and into Chrome's own anchor page (g2g_anchor.html).
//
// installG2GReader(video, layout, peerConnection) watches `video` with requestVideoFrameCallback: for each
// presented frame it reads the painter's code area (layout: the screen's size and the code's place on it,
// in screen pixels, and glasscode's CELL, COLUMNS, ROWS): the mean luma of the inner half of each cell, from
// the frame's luma plane (VideoFrame.copyTo) or else from a canvas it is drawn to (BT.601 weights), as two
// hex digits a cell, beside the frame's metadata. Times are DOMHighResTimeStamps (ms on the page's performance timeline; wall clock =
// performance.timeOrigin + t). glasscode.py decodes the cells; nothing is judged here.
//
// window.g2g.begin() starts a window (samples cleared, getStats read); window.g2g.end() resolves to
// { samples: [[cells, callbackNow, presentationTime, expectedDisplayTime, receiveTime|null,
//   captureTime|null, presentedFrames, rtpTimestamp|null, width, height], ...], timeOrigin,
//   path: how the cells were read, clockSkewMs: the largest |Date.now() - (timeOrigin + performance.now())| seen, stats: inbound-rtp deltas
//   over the window (framesDecoded, framesDropped, jitterBufferDelay and jitterBufferEmittedCount in s and
//   frames, bytesReceived, totalDecodeTime s), jitterBufferTarget: the receiver's setting (ms, or null) }.
"use strict";

window.installG2GReader = function (video, layout, peerConnection) {
  const codeWidth = layout.columns * layout.cell, codeHeight = layout.rows * layout.cell;
  const canvas = document.createElement("canvas");
  canvas.width = codeWidth;
  canvas.height = codeHeight;
  const context = canvas.getContext("2d", { willReadFrequently: true });
  let samples = [], pending = [], recording = false, skew = 0, before = null;

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

  // The cheaper way: the frame's own luma plane (WebCodecs VideoFrame.copyTo of the code's rectangle; no
  // RGB conversion of the whole 1080p picture, as drawImage does in software). The canvas when the frame
  // is not planar YUV or cannot be wrapped. Mean of the inner half of each cell, in the plane's own range
  // (limited-range luma: black ≈ 16, white ≈ 235; glasscode's thresholds are 64 and 192).
  async function cellsFromPlane(frame) {
    const scaleX = frame.displayWidth / layout.screenWidth, scaleY = frame.displayHeight / layout.screenHeight;
    const even = (v) => Math.max(0, Math.floor(v / 2) * 2);
    const x0 = even(layout.codeX * scaleX), y0 = even(layout.codeY * scaleY);
    const rect = { x: x0, y: y0, width: Math.min(frame.codedWidth - x0, even(codeWidth * scaleX) + 2),
      height: Math.min(frame.codedHeight - y0, even(codeHeight * scaleY) + 2) };
    const buffer = new Uint8Array(frame.allocationSize({ rect }));
    const planes = await frame.copyTo(buffer, { rect });
    const { offset, stride } = planes[0];
    let hex = "";
    for (let row = 0; row < layout.rows; row++) {
      for (let column = 0; column < layout.columns; column++) {
        const left = (layout.codeX + column * layout.cell + layout.cell / 4) * scaleX - x0;
        const top = (layout.codeY + row * layout.cell + layout.cell / 4) * scaleY - y0;
        const right = left + layout.cell / 2 * scaleX, bottom = top + layout.cell / 2 * scaleY;
        let total = 0, count = 0;
        for (let y = Math.round(top); y < Math.round(bottom); y++) {
          for (let x = Math.round(left); x < Math.round(right); x++) {
            total += buffer[offset + y * stride + x];
            count++;
          }
        }
        hex += Math.round(total / count).toString(16).padStart(2, "0");
      }
    }
    return hex;
  }

  let path = null;
  async function read() {
    let frame = null;
    try {
      frame = new VideoFrame(video);
      if (["I420", "I420A", "NV12"].includes(frame.format)) {
        path = "VideoFrame luma plane (" + frame.format + ")";
        return await cellsFromPlane(frame);
      }
    } catch (error) {
      path = null;
    } finally {
      if (frame) frame.close();
    }
    path = "canvas drawImage";
    return cellsOf();
  }

  function onFrame(now, metadata) {
    if (recording && video.videoWidth) {
      const at = performance.now();
      skew = Math.max(skew, Math.abs(Date.now() - (performance.timeOrigin + at)));
      const sample = [null, at, metadata.presentationTime, metadata.expectedDisplayTime,
        metadata.receiveTime ?? null, metadata.captureTime ?? null, metadata.presentedFrames,
        metadata.rtpTimestamp ?? null, metadata.width, metadata.height];
      samples.push(sample);
      pending.push(read().then((cells) => { sample[0] = cells; }, () => { sample[0] = ""; }));
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
      pending = [];
      skew = 0;
      before = await inbound();
      recording = true;
    },
    async end() {
      recording = false;
      await Promise.all(pending);
      const after = await inbound();
      const keys = ["framesDecoded", "framesDropped", "framesReceived", "jitterBufferDelay", "jitterBufferEmittedCount",
        "bytesReceived", "totalDecodeTime", "packetsLost", "nackCount", "pliCount"];
      const stats = {};
      for (const key of keys) {
        if (after && after[key] !== undefined) stats[key] = after[key] - ((before && before[key]) || 0);
      }
      const pc = peerConnection();
      const receiver = pc && pc.getReceivers()[0];
      return { samples, timeOrigin: performance.timeOrigin, clockSkewMs: skew, stats, path,
        jitterBufferTarget: receiver && "jitterBufferTarget" in receiver ? receiver.jitterBufferTarget : null };
    },
  };
};
