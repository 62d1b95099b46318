"""Where our glass-to-glass time goes (g2g.py): each frame Chromium presented, joined with the call's
`frame sent` debug line of the same frame, splits painted → received into painted → captured (the agent's
grab), captured → sent (agent, socket, call: decode/convert, VP8, packetize, pace; the last packet left)
and sent → received (loopback, SRTP, Chromium's reassembly).

The join: the call stamps a frame's RTP timestamp as offset + floor(capture_us × 90000 / 10^6) mod 2^32
(RTPTimestampMapper, origin 0, a random offset per viewer; capture_us on CLOCK_MONOTONIC), and
requestVideoFrameCallback gives each presented frame's `rtpTimestamp`. The offset is the value of
(rtpTimestamp − ticks(capture_us)) mod 2^32 that most presented frames share with a sent frame; a frame
with no sent frame at that offset stays unjoined. CLOCK_MONOTONIC becomes wall-clock ms with the
realtime − monotonic difference the bench measured around the run.
"""

import collections
import re

SENT = re.compile(r"frame sent .*?capture_us=(\d+) sent_us=(\d+)")


def sent_frames(call_log):
    """[(capture_us, sent_us)] from the call's debug log (CLOCK_MONOTONIC µs)."""
    return [(int(m.group(1)), int(m.group(2))) for m in SENT.finditer(call_log)]


def ticks(capture_us):
    return capture_us * 90_000 // 1_000_000


def join(rtp_timestamps, sent, realtime_minus_monotonic_ms):
    """{rtpTimestamp: (captured, sent)} in wall-clock ms (see the module's docstring), and the share of the
    distinct presented timestamps joined."""
    wanted = set(t for t in rtp_timestamps if t is not None)
    if not wanted or not sent:
        return {}, 0.0
    votes = collections.Counter()
    for capture, _ in sent:
        base = ticks(capture)
        for rtp in wanted:
            votes[(rtp - base) % (1 << 32)] += 1
    offset, _ = votes.most_common(1)[0]
    by_rtp = {}
    for capture, sent_at in sent:
        rtp = (offset + ticks(capture)) % (1 << 32)
        if rtp in wanted:
            by_rtp[rtp] = (capture / 1000 + realtime_minus_monotonic_ms, sent_at / 1000 + realtime_minus_monotonic_ms)
    return by_rtp, len(by_rtp) / len(wanted)


def self_test():
    """The join finds the offset and the frames, and leaves a stranger unjoined."""
    offset, delta = 4_000_000_000, 1.7e12
    sent = [(1_000_000 + k * 33_333, 1_000_000 + k * 33_333 + 20_000) for k in range(200)]
    presented = [(offset + ticks(c)) % (1 << 32) for c, _ in sent[10:150:2]] + [12345]
    joined, share = join(presented, sent, delta)
    assert len(joined) == 70 and 0.98 < share < 0.99, (len(joined), share)
    capture, sent_at = joined[(offset + ticks(sent[10][0])) % (1 << 32)]
    assert abs(capture - (sent[10][0] / 1000 + delta)) < 1e-6 and abs(sent_at - capture - 20) < 1e-6
    return 3


if __name__ == "__main__":
    print("g2g_split: %d checks passed" % self_test())
