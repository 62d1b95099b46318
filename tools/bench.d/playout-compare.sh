#!/bin/bash
# tools/bench.d/playout-compare.sh: the viewer page as it is vs Chromium's defaults, 3 interleaved runs of 150 frames;
# prints run, mode, jitterBufferDelay ms/frame, jitterBufferTargetDelay ms/frame, frames, jitterBufferTarget, extmaps.

B=${BUILD:-$(dirname "$0")/../../.build/release}; P=$(dirname "$0")/../../Tests/EndToEndTests/Peers; W=$(mktemp -d)
$B/screencast-call --source testpattern --pattern-size 1280x720 --http 127.0.0.1:18931 --ice-address 127.0.0.1 --socket $W/a.sock --stats-interval 0 2>$W/call.log &
CALL=$!
sleep 2
for run in 1 2 3; do for mode in low default; do
  extra=""; [ $mode = default ] && extra="--default-playout"
  rm -rf $W/p; mkdir -p $W/p
  HOME=$W/p TMPDIR=$W/p /usr/bin/python3 $P/chromium_viewer.py --url http://127.0.0.1:18931/ --profile $W/p/prof --frames 150 --timeout 40 $extra \
   | python3 -c "import json,sys; r=json.load(sys.stdin); l=r['lowLatency']; print('$run $mode', round(l.get('jitterBufferMsPerFrame',-1),2), round(l.get('jitterBufferTargetMsPerFrame',-1),2), l.get('framesEmitted'), l['jitterBufferTarget'], len(l['answerExtmaps']), r['error'])"
  uptime | sed 's/.*load/load/'
done; done
kill $CALL
