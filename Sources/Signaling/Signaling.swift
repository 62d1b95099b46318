// Signaling: see issue 5
