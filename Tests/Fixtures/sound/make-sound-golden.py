#!/usr/bin/env python3
"""Writes agent-sound.frames: the golden sound stream of Protocol/frame-wire.md §2.10, made here by hand from
the document, independent of the Swift encoder. Three 10 ms messages of a 1 kHz sine at 48 kHz stereo s16le
(amplitude 16384, -9.03 dBFS RMS), a 4-byte JPEG-shaped picture between the first and the second, and a
message of a kind no reader knows (Message-Kind: cursor) before the last, which a reader skips whole.
Run: python3 make-sound-golden.py (writes next to itself)."""
import math, os, struct

def sound(seq, stamp, phase0):
    samples = []
    for n in range(480):
        v = int(round(16384 * math.sin(2 * math.pi * 1000 * (phase0 + n) / 48000)))
        samples += [v, v]
    body = struct.pack("<%dh" % len(samples), *samples)
    head = ("HTTP/1.1 200 OK\r\nContent-Length: %d\r\nMessage-Kind: sound\r\nSound-Format: S16LE\r\n"
            "Sound-Rate: 48000\r\nSound-Channels: 2\r\nSound-Samples: 480\r\nSound-Timestamp: %d\r\n"
            "Sound-Sequence: %d\r\nSound-Source: system\r\n\r\n") % (len(body), stamp, seq)
    return head.encode() + body

picture = (b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nBuffer-Width: 2\r\nBuffer-Height: 2\r\n"
           b"Buffer-Orientation: 1\r\nBuffer-Timestamp: 1000005000\r\nBuffer-Sequence: 7\r\n\r\n\xff\xd8\xff\xd9")
unknown = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nMessage-Kind: cursor\r\n\r\nx=1\r\n"
stream = sound(0, 1000000000, 0) + picture + sound(1, 1000010000, 480) + unknown + sound(2, 1000020000, 960)
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "agent-sound.frames"), "wb") as f:
    f.write(stream)
