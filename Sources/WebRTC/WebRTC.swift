// WebRTC: see issue 5
