// Signaling: the call's HTTP side (issue 5), on libmicrohttpd.
//
//   SignalingServer ── routes ──▶ HTTPRouter (method + path → handler, CORS, OPTIONS, 404/405/413)
//         │                            ▲
//         └── HTTPServer (MHD daemon owner, thread per connection) ── requests ┘
//
// WHEPEndpoint turns POST/PATCH/DELETE into calls on a WHEPSessionProvider (implemented by the WebRTC
// side); ViewerPage is the page at GET /. HTTPRouter is sans-I/O and can be driven in memory
// (`respond(to:)`); only HTTPServer touches sockets and threads.
