// RTP: see issue 5
