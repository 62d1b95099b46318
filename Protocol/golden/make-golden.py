#!/usr/bin/env python3
"""Writes the golden frame streams in this folder and their expected results.

Independent of the Swift code on purpose: the bytes come from this script and Debian's `cjpeg`
(package libjpeg-turbo-progs), so the Swift encoder is checked against them, not against itself.
Run from anywhere: `python3 Protocol/golden/make-golden.py`. The committed files are the source of
truth; rerunning with another cjpeg version may change JPEG bytes (and then the sha256 values).
"""
import argparse
import hashlib
import json
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


def pattern(width, height, seed):
    """A PPM (P6) image: gradients plus a moving block, different for each seed."""
    rows = []
    for y in range(height):
        row = bytearray()
        for x in range(width):
            r = (x * 255 // max(1, width - 1) + seed * 40) % 256
            g = (y * 255 // max(1, height - 1)) % 256
            b = 220 if (x // 8 + y // 8 + seed) % 2 == 0 else 30
            if seed * 6 <= x < seed * 6 + 12 and 4 <= y < 16:
                r, g, b = 250, 250, 250
            row += bytes((r, g, b))
        rows.append(bytes(row))
    return b"P6\n%d %d\n255\n" % (width, height) + b"".join(rows)


def jpeg(width, height, seed, quality=85):
    ppm = pattern(width, height, seed)
    return subprocess.run(["cjpeg", "-quality", str(quality), "-optimize"], input=ppm,
                          capture_output=True, check=True).stdout


def i420(width, height, seed, color_range="full"):
    """The pattern as tightly packed BT.601 I420: Y, then Cb and Cr ((width+1)//2 x (height+1)//2), each
    chroma sample the rounded average of its 2x2 block (edges clamped). color_range "full": JFIF's codes,
    like a decoded JPEG; "limited": ITU-R BT.601-7 section 2.5.3's (Y 16-235, Cb/Cr 16-240), what
    screencast-agent --format i420 sends with Buffer-Color-Range: limited."""
    ppm = pattern(width, height, seed)
    pixels = ppm[len(b"P6\n%d %d\n255\n" % (width, height)):]
    ys, cbs, crs = [], [], []
    for i in range(width * height):
        r, g, b = pixels[3 * i], pixels[3 * i + 1], pixels[3 * i + 2]
        if color_range == "limited":
            ys.append(min(255, max(0, round(16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255))))
            cbs.append(128 + (-37.797 * r - 74.203 * g + 112 * b) / 255)
            crs.append(128 + (112 * r - 93.786 * g - 18.214 * b) / 255)
        else:
            ys.append(min(255, max(0, round(0.299 * r + 0.587 * g + 0.114 * b))))
            cbs.append(128 - 0.168736 * r - 0.331264 * g + 0.5 * b)
            crs.append(128 + 0.5 * r - 0.418688 * g - 0.081312 * b)

    def half(plane):
        out = bytearray()
        for y in range(0, height, 2):
            for x in range(0, width, 2):
                x1, y1 = min(x + 1, width - 1), min(y + 1, height - 1)
                total = plane[y * width + x] + plane[y * width + x1] + plane[y1 * width + x] + plane[y1 * width + x1]
                out.append(min(255, max(0, round(total / 4))))
        return bytes(out)
    return bytes(ys) + half(cbs) + half(crs)


def ios_header(length, width, height, orientation, extra=b""):
    return (b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nBuffer-Width: %d\r\nBuffer-Height: %d\r\n"
            b"Buffer-Orientation: %d\r\n" % (length, width, height, orientation)) + extra + b"\r\n"


ROTATION = {8: 90, 3: 180, 6: 270}


def write(name, note, canonical, parts, tail=b"", error=None):
    """parts: list of (prefix_bytes_before_status_line, header_bytes, body, fields); tail: bytes after the
    last frame (a faulty message when `error` names its kind)."""
    stream = bytearray()
    frames = []
    for prefix, header, body, fields in parts:
        stream += prefix
        offset = len(stream)
        stream += header + body
        width, height, orientation = fields["w"], fields["h"], fields["o"]
        frame = {"offset": offset, "contentLength": len(body), "bufferWidth": width,
                 "bufferHeight": height, "orientation": orientation,
                 "rotation": ROTATION.get(orientation, 0)}
        if fields.get("format") == "BGRX-SHM":
            frame["format"] = "BGRX-SHM"
            frame["memory"] = fields["memory"]
        elif "format" in fields:
            frame["format"] = fields["format"]
            frame["colorRange"] = fields.get("range", "full")
        else:
            frame["jpegWidth"], frame["jpegHeight"] = fields["jw"], fields["jh"]
        if "ts" in fields:
            frame["timestamp"] = fields["ts"]
            frame["sequence"] = fields["seq"]
        if "capture" in fields:
            frame["capture"] = fields["capture"]
        if "damage" in fields:
            frame["damage"] = fields["damage"]
        if "damageFault" in fields:
            frame["damageFault"] = fields["damageFault"]
        frames.append(frame)
    stream += tail
    with open(os.path.join(HERE, name + ".frames"), "wb") as f:
        f.write(stream)
    expect = {"note": note, "canonical": canonical, "frames": frames, "end": "error" if error else "eof",
              "error": {"kind": error} if error else None,
              "sha256": hashlib.sha256(stream).hexdigest()}
    with open(os.path.join(HERE, name + ".expect.json"), "w") as f:
        json.dump(expect, f, indent=1)
        f.write("\n")


def write_damage(name, note, frames):
    """Frames as our agent writes them with Buffer-Damage: (w, h, format, seed or memory, value, rects)."""
    parts = []
    for seq, (w, h, fmt, seed, value, rects) in enumerate(frames):
        ts = 11_000_000 + seq * 33_333
        fields = {"w": w, "h": h, "o": 1, "ts": ts, "seq": seq, "damage": rects}
        tail = b"Buffer-Timestamp: %d\r\nBuffer-Sequence: %d\r\nBuffer-Damage: %s\r\n" % (ts, seq, value.encode())
        if fmt == "JPEG":
            body = jpeg(w, h, seed)
            fields["jw"], fields["jh"] = w, h
            extra = tail
        elif fmt == "I420":
            body = i420(w, h, seed, "limited")
            extra = b"Buffer-Format: I420\r\nBuffer-Color-Range: limited\r\n" + tail
            fields["format"], fields["range"] = "I420", "limited"
        else:
            body = b"\n"
            extra = b"Buffer-Format: BGRX-SHM\r\nBuffer-Memory: %d %d %d\r\n" % seed + tail
            fields["format"], fields["memory"] = "BGRX-SHM", list(seed)
        parts.append((b"", ios_header(len(body), w, h, 1, extra), body, fields))
    write(name, note, True, parts)


def main():
    # 1. Exactly what the iOS sender writes: three frames, orientation 1.
    parts = []
    for seed in range(3):
        body = jpeg(64, 48, seed)
        parts.append((b"", ios_header(len(body), 64, 48, 1), body, {"w": 64, "h": 48, "o": 1, "jw": 64, "jh": 48}))
    write("ios-three-frames", "three 64x48 frames byte for byte as the iOS sender writes them", True, parts)

    # 2. What our agent writes: the iOS bytes plus Buffer-Timestamp and Buffer-Sequence, 30 fps spacing.
    parts = []
    for seq in range(4):
        body = jpeg(80, 60, seq + 3)
        ts = 5_000_000 + seq * 33_333
        extra = b"Buffer-Timestamp: %d\r\nBuffer-Sequence: %d\r\n" % (ts, seq)
        parts.append((b"", ios_header(len(body), 80, 60, 1, extra), body,
                      {"w": 80, "h": 60, "o": 1, "jw": 80, "jh": 60, "ts": ts, "seq": seq}))
    write("agent-extended", "four 80x60 frames as screencast-agent writes them (timestamps 33333 us apart)", True, parts)

    # 2b. What our agent writes now: the same plus the Capture-* fields (frame-wire.md §2.7); the monitor
    # moves between the two frames.
    parts = []
    for seq, rect in enumerate(["80x60+0+0", "80x60+1920+0"]):
        body = jpeg(80, 60, seq + 20)
        ts = 7_000_000 + seq * 33_333
        capture = {"Capture-Display": ":0", "Capture-Area": "monitor HDMI-1", "Capture-Rect": rect, "Capture-FPS": "30"}
        extra = b"Buffer-Timestamp: %d\r\nBuffer-Sequence: %d\r\n" % (ts, seq)
        extra += b"".join(b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in capture.items())
        parts.append((b"", ios_header(len(body), 80, 60, 1, extra), body,
                      {"w": 80, "h": 60, "o": 1, "jw": 80, "jh": 60, "ts": ts, "seq": seq, "capture": capture}))
    write("agent-capture", "two 80x60 frames as screencast-agent writes them, with the Capture-* fields", True, parts)

    # 3. What a tolerant reader must also accept: not byte-identical to our writer.
    body_a = jpeg(48, 64, 1)
    body_b = jpeg(48, 64, 2)
    header_a = (b"HTTP/1.0 200\nbuffer-height:64\ncontent-length: \t%d \t\nX-Unknown: (anything: at all)\n"
                b"Buffer-Width: 0048\nBUFFER-ORIENTATION: 6\nBuffer-Height: 64\n\n" % len(body_a))
    header_b = (b"HTTP/1.1 200 Fine Thanks\r\nContent-Length: %d\r\nBuffer-Width: 48\r\nBuffer-Height: 64\r\n"
                b"Buffer-Orientation: 300\r\nBuffer-Orientation: abc\r\n\r\n" % len(body_b))
    write("tolerant-reader",
          "LF endings, HTTP/1.0 without reason, any case and order, padding, leading zeros, unknown and repeated "
          "headers, empty lines before a status line, out-of-range orientation", False,
          [(b"\r\n\n", header_a, body_a, {"w": 48, "h": 64, "o": 6, "jw": 48, "jh": 64}),
           (b"\r\n", header_b, body_b, {"w": 48, "h": 64, "o": 0, "jw": 48, "jh": 64})])

    # 4. Our agent with --format i420: raw limited-range I420 bodies (odd and even sizes), Buffer-Format and
    #    Buffer-Color-Range right after the iOS fields; a JPEG frame between them (the format is per message).
    parts = []
    for seq, (w, h, fmt) in enumerate([(37, 23, "I420"), (80, 60, "JPEG"), (4, 2, "I420")]):
        ts = 7_000_000 + seq * 33_333
        extra = b"Buffer-Timestamp: %d\r\nBuffer-Sequence: %d\r\n" % (ts, seq)
        fields = {"w": w, "h": h, "o": 1, "ts": ts, "seq": seq}
        if fmt == "I420":
            body = i420(w, h, seq + 1, "limited")
            assert len(body) == w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)
            extra = b"Buffer-Format: I420\r\nBuffer-Color-Range: limited\r\n" + extra
            fields["format"] = "I420"
            fields["range"] = "limited"
        else:
            body = jpeg(w, h, seq + 1)
            fields["jw"], fields["jh"] = w, h
        parts.append((b"", ios_header(len(body), w, h, 1, extra), body, fields))
    write("agent-i420", "screencast-agent --format i420: 37x23 and 4x2 raw limited-range I420 frames around an "
          "80x60 JPEG", True, parts)

    # 5. A raw frame whose Content-Length is one byte short of its I420 size: refused at the empty line.
    good = i420(6, 4, 2)
    bad = i420(5, 3, 3)[:-1]
    write("i420-wrong-length",
          "a 6x4 I420 frame, then a 5x3 one with Content-Length 24 where I420 needs 25: bodyLengthMismatch",
          False, [(b"", ios_header(len(good), 6, 4, 1, b"buffer-format: i420\r\n"), good,
                   {"w": 6, "h": 4, "o": 1, "format": "I420"})],
          tail=ios_header(len(bad), 5, 3, 1, b"Buffer-Format: I420\r\n") + bad, error="bodyLengthMismatch")

    # 6. Buffer-Color-Range as a tolerant reader takes it: any case, OWS, repeated with the same value, absent
    #    (an I420 body from before the field: full range), and "full" on a JPEG (redundant but true).
    limited = i420(6, 4, 4, "limited")
    full = i420(6, 4, 4, "full")
    jpeg_body = jpeg(16, 16, 5)
    write("i420-color-range",
          "6x4 I420 frames in limited range (field in any case, padded, repeated), in full range (said), in full "
          "range (no field: an older agent), then a 16x16 JPEG with Buffer-Color-Range: full", False,
          [(b"", ios_header(len(limited), 6, 4, 1, b"Buffer-Format: I420\r\nbuffer-color-range: \tLIMITED \r\n"
                            b"Buffer-Color-Range: limited\r\n"), limited,
            {"w": 6, "h": 4, "o": 1, "format": "I420", "range": "limited"}),
           (b"", ios_header(len(full), 6, 4, 1, b"Buffer-Format: I420\r\nBuffer-Color-Range: full\r\n"), full,
            {"w": 6, "h": 4, "o": 1, "format": "I420", "range": "full"}),
           (b"", ios_header(len(full), 6, 4, 1, b"Buffer-Format: I420\r\n"), full,
            {"w": 6, "h": 4, "o": 1, "format": "I420", "range": "full"}),
           (b"", ios_header(len(jpeg_body), 16, 16, 1, b"Buffer-Color-Range: full\r\n"), jpeg_body,
            {"w": 16, "h": 16, "o": 1, "jw": 16, "jh": 16})])

    # 7. A JPEG said to be limited range contradicts JFIF: badHeaderValue at the empty line; the frame
    #    before it stands.
    write("jpeg-limited-range",
          "a 16x16 JPEG, then one with Buffer-Color-Range: limited (a JPEG is full range): badHeaderValue",
          False, [(b"", ios_header(len(jpeg_body), 16, 16, 1), jpeg_body, {"w": 16, "h": 16, "o": 1, "jw": 16, "jh": 16})],
          tail=ios_header(len(jpeg_body), 16, 16, 1, b"Buffer-Color-Range: limited\r\n") + jpeg_body,
          error="badHeaderValue")

    # 8. Our agent with --format shm: the picture is in shared memory (a memfd passed with SCM_RIGHTS, which a
    #    byte stream cannot hold), so each message is the header and a one-LF body. Two 64x48 frames in slots
    #    0 and 1 of generation 1, a keepalive naming slot 1 again, then a resize to 32x16: generation 2.
    parts = []
    for seq, (w, h, memory) in enumerate([(64, 48, (1, 0, 2)), (64, 48, (1, 1, 2)), (64, 48, (1, 1, 2)), (32, 16, (2, 0, 2))]):
        ts = 9_000_000 + seq * 16_667
        extra = (b"Buffer-Format: BGRX-SHM\r\nBuffer-Memory: %d %d %d\r\nBuffer-Timestamp: %d\r\nBuffer-Sequence: %d\r\n"
                 % (memory + (ts, seq)))
        parts.append((b"", ios_header(1, w, h, 1, extra), b"\n",
                      {"w": w, "h": h, "o": 1, "ts": ts, "seq": seq, "format": "BGRX-SHM", "memory": list(memory)}))
    write("agent-shm", "screencast-agent --format shm: 64x48 in slots 0 and 1 of generation 1, a keepalive of slot 1, "
          "then 32x16 in generation 2 (the memory itself is not in the stream)", True, parts)

    # 9. Buffer-Memory as a reader checks it: a tolerant one first (padding, leading zeros, any case of the name
    #    and the format), then a slot beyond the two: badHeaderValue at the empty line.
    tolerant = ios_header(1, 8, 4, 1, b"buffer-format: bgrx-shm\r\nBUFFER-MEMORY: \t007 01 0010 \r\n")
    write("shm-bad-memory",
          "a tolerant BGRX-SHM header (generation 7, slot 1, version 10), then Buffer-Memory: 1 2 4 (slot 2 of 2): "
          "badHeaderValue", False,
          [(b"", tolerant, b"\n", {"w": 8, "h": 4, "o": 1, "format": "BGRX-SHM", "memory": [7, 1, 10]})],
          tail=ios_header(1, 8, 4, 1, b"Buffer-Format: BGRX-SHM\r\nBuffer-Memory: 1 2 4\r\n") + b"\n",
          error="badHeaderValue")

    # 10. Our agent's Buffer-Damage (frame-wire.md §2.9) on every format: the whole 64x48 JPEG first, then two
    #     rectangles, a keepalive ("none", the same JPEG again), then 6x4 I420 frames (a new size and format:
    #     the whole buffer, then one 2x2 block). Written in our writer's order.
    frames = [(64, 48, "JPEG", 30, "0,0,64,48", [[0, 0, 64, 48]]),
              (64, 48, "JPEG", 31, "8,4,12,12;40,30,24,18", [[8, 4, 12, 12], [40, 30, 24, 18]]),
              (64, 48, "JPEG", 31, "none", []),
              (6, 4, "I420", 6, "0,0,6,4", [[0, 0, 6, 4]]),
              (6, 4, "I420", 6, "2,0,2,2", [[2, 0, 2, 2]])]  # same picture: damage may name more than changed
    write_damage("agent-damage", "screencast-agent's Buffer-Damage: a whole 64x48 JPEG, two rectangles, a keepalive "
                 "(none), then 6x4 I420 frames: the whole buffer, then one 2x2 block", frames)
    # 10b. The same on the shared-memory wire (a stream of its own: a replay cannot carry the memory).
    write_damage("agent-shm-damage", "screencast-agent --format shm with Buffer-Damage: the whole 8x4 picture in slot 0, "
                 "one 2x2 block in slot 1, a keepalive (none) of slot 1",
                 [(8, 4, "BGRX-SHM", (1, 0, 2), "0,0,8,4", [[0, 0, 8, 4]]),
                  (8, 4, "BGRX-SHM", (1, 1, 2), "2,0,2,2", [[2, 0, 2, 2]]),
                  (8, 4, "BGRX-SHM", (1, 1, 2), "none", [])])

    # 11. Buffer-Damage as a reader takes it: tolerant values, and malformed ones that never fail the frame
    #     (each delivered with its damage unknown and the fault's kind), the stream going on to a good frame.
    body = jpeg(16, 16, 7)
    values = [(b"buffer-damage: \t NONE \r\n", [], None),
              (b"Buffer-Damage: 00,0,16,016;4,4,1,1\r\nBuffer-Damage: 00,0,16,016;4,4,1,1\r\n", [[0, 0, 16, 16], [4, 4, 1, 1]], None),
              (b"Buffer-Damage: 0,0,17,1\r\n", None, "outsideBuffer"),
              (b"Buffer-Damage: 1,2,3\r\n", None, "syntax"),
              (b"Buffer-Damage: 1, 2,3,4\r\n", None, "syntax"),
              (b"Buffer-Damage: 0,0,0,4\r\n", None, "emptyRectangle"),
              (b"Buffer-Damage: " + b";".join([b"0,0,1,1"] * 17) + b"\r\n", None, "tooManyRectangles"),
              (b"Buffer-Damage: 0,0,1,1\r\nBuffer-Damage: 0,0,2,2\r\n", None, "conflicting"),
              (b"Buffer-Damage:\r\n", None, "syntax"),
              (b"Buffer-Damage: 15,15,1,1\r\n", [[15, 15, 1, 1]], None)]
    parts = []
    for extra, rects, fault in values:
        fields = {"w": 16, "h": 16, "o": 1, "jw": 16, "jh": 16}
        if rects is not None:
            fields["damage"] = rects
        if fault:
            fields["damageFault"] = fault
        parts.append((b"", ios_header(len(body), 16, 16, 1, extra), body, fields))
    write("damage-tolerant-and-malformed",
          "Buffer-Damage read tolerantly (any case, padding, leading zeros, a same-valued repeat), then malformed "
          "values (outside, syntax, empty, 17 rectangles, a conflicting repeat, empty value): each frame delivered "
          "with its damage unknown and the fault named, and a good one after", False, parts)


if __name__ == "__main__":
    argparse.ArgumentParser(
        description="Write the golden frame streams (*.frames) and their expected readings (*.expect.json) "
                    "into " + HERE + ", replacing the committed ones. Needs cjpeg (libjpeg-turbo-progs).",
        epilog="The committed files are the source of truth; another cjpeg version may change the JPEG bytes.",
    ).parse_args()
    main()
