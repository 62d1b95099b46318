#!/usr/bin/env python3
"""The visual time code of the glass-to-glass benchmark (tools/bench --phases g2g).

The painter (painter.py) shows the wall-clock time as a grid of large black and white cells; the browser
reads each presented video frame back (g2g_reader.js measures the mean luma of each cell) and this module
turns the 48 luma values into the painted time, or says why it cannot.

Layout: COLUMNS x ROWS = 8 x 6 = 48 cells of CELL = 24 pixels, row by row from the top left, inside a white
quiet zone of QUIET = 24 pixels (the painter's window is WINDOW_WIDTH x WINDOW_HEIGHT = 240 x 192).
A black cell is a 1 bit, a white cell a 0 bit.

  bits  0-39  the painted time: CLOCK_REALTIME in ms (Unix epoch) modulo 2^40, most significant bit first
              (2^40 ms is 34.8 years: the reader picks the value nearest its own clock)
  bits 40-47  CRC-8 (polynomial 0x07, initial value 0xFF, no reflection, final XOR 0x55) of the 5 time
              bytes, big-endian: an all-black or all-white area does not pass

A reading is refused (never guessed) when any cell's mean luma lies in the undecided band (AMBIGUOUS_LOW,
AMBIGUOUS_HIGH) = (64, 192): a frame caught mid-repaint, blurred by a coarse VP8 quantizer or scaled
across a cell edge; or when the CRC does not match; or when the value lies further than MAX_SKEW_MS from the
reader's clock. CLOCK_REALTIME is the clock of the browser's performance.timeOrigin + performance.now().

Run `python3 glasscode.py --self-test` for the unit tests (also run by `tools/bench --self-check`).
"""

import random
import sys

CELL = 24
COLUMNS, ROWS = 8, 6
BITS = COLUMNS * ROWS
TIME_BITS = 40
QUIET = 24
WINDOW_WIDTH = COLUMNS * CELL + 2 * QUIET
WINDOW_HEIGHT = ROWS * CELL + 2 * QUIET
AMBIGUOUS_LOW, AMBIGUOUS_HIGH = 64, 192
MAX_SKEW_MS = 60_000


def crc8(data):
    """CRC-8, polynomial x^8 + x^2 + x + 1 (0x07), initial value 0xFF, final XOR 0x55, MSB first."""
    crc = 0xFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = ((crc << 1) ^ 0x07) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return crc ^ 0x55


def encode(ms):
    """The 48 bits (1 = black) for the time `ms` (integer ms since the Unix epoch), in cell order."""
    value = int(ms) % (1 << TIME_BITS)
    payload = value.to_bytes(TIME_BITS // 8, "big")
    word = (value << 8) | crc8(payload)
    return [(word >> (BITS - 1 - i)) & 1 for i in range(BITS)]


def cell_rect(index):
    """(x, y, width, height) of cell `index` inside the painter's window, in pixels."""
    row, column = divmod(index, COLUMNS)
    return QUIET + column * CELL, QUIET + row * CELL, CELL, CELL


class Unreadable(Exception):
    """Why a frame's code was refused: `reason` is one of "ambiguous", "checksum", "skew", "shape"."""

    def __init__(self, reason, detail=""):
        super().__init__("%s: %s" % (reason, detail) if detail else reason)
        self.reason = reason


def decode(lumas, near_ms):
    """The painted time (ms since the Unix epoch) from 48 mean lumas (0-255, cell order), taking of the
    2^40 ms wraps the one nearest `near_ms`. Raises Unreadable."""
    if len(lumas) != BITS:
        raise Unreadable("shape", "%d values, not %d" % (len(lumas), BITS))
    bits = []
    for index, luma in enumerate(lumas):
        if AMBIGUOUS_LOW < luma < AMBIGUOUS_HIGH:
            raise Unreadable("ambiguous", "cell %d has luma %s" % (index, luma))
        bits.append(1 if luma <= AMBIGUOUS_LOW else 0)
    word = 0
    for bit in bits:
        word = (word << 1) | bit
    value, check = word >> 8, word & 0xFF
    if crc8(value.to_bytes(TIME_BITS // 8, "big")) != check:
        raise Unreadable("checksum")
    period = 1 << TIME_BITS
    base = int(near_ms) - int(near_ms) % period
    ms = min((base + value + k * period for k in (-1, 0, 1)), key=lambda candidate: abs(candidate - near_ms))
    if abs(ms - near_ms) > MAX_SKEW_MS:
        raise Unreadable("skew", "%d ms from the reader's clock" % (ms - near_ms))
    return ms


def from_hex(text):
    """The 48 lumas from the reader's hex string (two hex digits a cell)."""
    return [int(text[i:i + 2], 16) for i in range(0, len(text), 2)]


# MARK: - Self-test

def _lumas(bits, black=0, white=255):
    return [black if b else white for b in bits]


def self_test():
    rng = random.Random(15)
    now = 1_796_000_000_000  # late 2026
    checks = 0
    for _ in range(2000):
        ms = now + rng.randrange(-10_000_000, 10_000_000)
        assert decode(_lumas(encode(ms)), ms + rng.randrange(-5000, 5000)) == ms
        checks += 1
    # Codec noise: every cell off by up to 60 levels still reads.
    for _ in range(500):
        ms = now + rng.randrange(1_000_000)
        noisy = [max(0, min(255, v + rng.randrange(-60, 61))) for v in _lumas(encode(ms))]
        assert decode(noisy, ms) == ms
        checks += 1
    # Every single-bit and every two-bit error is caught by the CRC.
    bits = encode(now + 12345)
    for i in range(BITS):
        for j in range(i, BITS):
            flipped = list(bits)
            flipped[i] ^= 1
            if j != i:
                flipped[j] ^= 1
            try:
                decode(_lumas(flipped), now)
                raise AssertionError("bits %d, %d flipped and not caught" % (i, j))
            except Unreadable as refused:
                assert refused.reason in ("checksum", "skew"), refused
            checks += 1
    # A cell halfway between two values (a frame caught mid-repaint, blurred) is refused, not guessed.
    lumas = _lumas(encode(now))
    lumas[17] = 128
    checks += _expect(lumas, now, "ambiguous")
    checks += _expect([0] * BITS, now, "checksum")
    checks += _expect([255] * BITS, now, "checksum")
    checks += _expect(_lumas(encode(now)), now + MAX_SKEW_MS + 1, "skew")
    checks += _expect(_lumas(encode(now))[:-1], now, "shape")
    # The 2^40 ms wrap: a value painted just before the wrap, read just after it.
    period = 1 << TIME_BITS
    wrap = period * 2
    assert decode(_lumas(encode(wrap - 3)), wrap + 2) == wrap - 3
    assert decode(_lumas(encode(wrap + 3)), wrap - 2) == wrap + 3
    assert from_hex("00ff7f") == [0, 255, 127]
    # A consecutive run of times never shares a code (the code changes with every ms).
    codes = {tuple(encode(now + k)) for k in range(5000)}
    assert len(codes) == 5000
    return checks + 4


def _expect(lumas, near, reason):
    try:
        decode(lumas, near)
    except Unreadable as refused:
        assert refused.reason == reason, (refused.reason, reason)
        return 1
    raise AssertionError("expected %s" % reason)


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        print("glasscode: %d checks passed" % self_test())
    else:
        sys.exit("usage: glasscode.py --self-test")
