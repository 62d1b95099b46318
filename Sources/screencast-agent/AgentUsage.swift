/// `screencast-agent --help`.
let agentUsage = """
    Usage: screencast-agent [options]

    Captures the screen — X11, or a Wayland desktop through the screen-cast portal (--source) — and
    sends it as JPEG frames (raw I420 with --format i420, shared memory with --format shm;
    Protocol/frame-wire.md) to the call process's Unix socket, with the sound beside it if asked
    (--audio). Only changes are sent (X DAMAGE, or the compositor's damage); once the screen has
    been still for a moment one sharper JPEG refresh follows ("paint-over"), and the last frame is
    repeated every --keepalive seconds. With no call on the socket nothing is captured until one
    connects.

    Output:
      --socket PATH          the call process's socket (default $XDG_RUNTIME_DIR/screencast/agent.sock,
                             else /tmp/screencast-$UID/agent.sock). Waits and reconnects with back-off
                             while nobody listens; a slow reader makes frames drop, never queue.
      --output FILE          write a frame dump (.frames) instead of using the socket
      --record FILE          write a frame dump as well as sending to the socket (a dump that cannot be
                             written, say a full disk, ends the recording, not the sending; exit 1 at
                             the end)
      --frames N             stop after N frames, 1-2147483647 (keepalives count)
      --duration S           stop after S seconds, 0.001-31536000 (a year)

    Source:
      --source x11|portal|auto
                             where pictures come from (default auto: the portal on a Wayland session,
                             i.e. XDG_SESSION_TYPE=wayland, or WAYLAND_DISPLAY set and DISPLAY not,
                             unless an X11 option below is given; else X11). portal: the desktop's
                             xdg-desktop-portal ScreenCast (GNOME, KDE, sway/wlroots): the first time
                             its chooser asks which screen to share; the choice is kept (a restore
                             token in $XDG_STATE_HOME/screencast/portal-restore-token, mode 0600) so
                             later runs start without asking. Frames arrive over PipeWire (shared
                             memory), with the compositor's damage as Buffer-Damage. The desktop's
                             "stop sharing" (the portal closing the session, or its stream going
                             away) ends the run with exit 0; no portal, no ScreenCast backend or a
                             refused chooser is exit 1 with what is missing. PipeWire restarting is
                             followed: the portal is asked again (the kept choice) for up to
                             --portal-reconnect seconds, then exit 1. A resized monitor is followed.
      --forget-portal-choice drop the kept choice first: the portal's chooser asks again
      --portal-reconnect S   after the PipeWire daemon went away, ask the portal for a new stream for up
                             to S seconds, 0-3600 (default 60; 0: exit 1 at once)
      --window ID|TITLE|pick one window instead of the screen. X11: by id (0x1a00003 or decimal, as
                             xwininfo and xdotool print it) or exact title (WM_NAME/_NET_WM_NAME);
                             read through XComposite (whole also where covered), followed as it
                             moves; the size on the wire stays its first one: a resized window is
                             scaled into it, aspect kept, between black bars; hidden: the last frame
                             repeats; closed: the run ends with exit 0 ("... was closed",
                             stop=source-ended); no such window is exit 64. pick: the portal's chooser
                             lists windows (--source portal); a portal that offers none (sway's
                             xdg-desktop-portal-wlr) is exit 1, saying so.

    What to capture (X11):
      --display NAME         X display (default $DISPLAY)
      --monitor NAME|INDEX   one RandR monitor, by name or by its index in --list-monitors; followed
                             when it is resized, moved or redefined (xrandr --setmonitor); one that is
                             gone for 2 s ends the capture
      --region X,Y,W,H       a rectangle of the screen, in pixels (or WxH+X+Y, as --list-monitors writes
                             it); one partly outside the screen is cut to the visible part (a warning
                             gives the new size), one wholly outside is bad usage (exit 64)
      --list-monitors        print the display's monitors ("INDEX: NAME WxH+X+Y [primary]") and exit
      --cursor on|off        draw the pointer's cursor into frames (default on)
      --shm auto|off         read pixels through MIT-SHM when possible (default auto; off forces
                             GetImage)

    Sound (Protocol/frame-wire.md §2.10):
      --audio system|mic|both|off
                             send sound beside the pictures (default off): system is what this machine
                             plays (the monitor of the default PulseAudio sink), mic the default source,
                             both the two mixed. 48 kHz stereo 16-bit PCM in 10 ms messages, stamped
                             with when each was played (CLOCK_MONOTONIC, as the pictures). Through
                             libpulse: PulseAudio or PipeWire's pipewire-pulse. No sound server: a
                             warning, and the picture is shared alone; a server that goes away is
                             retried every second. Sound is never dropped silently: a reader that
                             stalls for more than 1 s loses the oldest sound, counted and logged.
      --audio-device NAME    record this PulseAudio source instead (`pactl list short sources`; a
                             sink's sound is SINK.monitor); with --audio system or mic. A name the
                             server lacks is bad usage (exit 64).

    Format:
      --format jpeg|i420|shm frame bodies (default jpeg). jpeg: what iOS senders write and every reader
                             accepts. i420: the raw picture (BT.601 limited-range I420, what VP8
                             carries; "Buffer-Format: I420", "Buffer-Color-Range: limited"),
                             no JPEG encode here and no decode in the call, for a call on this machine
                             only: ~3.1 MB a frame at 1080p (~93 MB/s at 30 fps); iOS-style readers
                             accept only jpeg. shm: the BGRX picture in memory shared with the call (a
                             memfd passed once over the socket; "Buffer-Format: BGRX-SHM"): per frame
                             one copy into shared memory and a header on the socket; needs --socket (no
                             --output or --record) and a call that maps it (others refuse the stream).
                             --quality, --subsampling and the paint-over apply to jpeg only.

    Rate, size and quality:
      --fps N                at most N frames per second, 0.1-240 (default 30; fewer when less
                             changes)
      --scale F              scale frames by F, 0.01...1 (e.g. 0.5 halves each side)
      --max-size WxH         shrink frames to fit WxH, keeping the aspect ratio (never enlarges)
      --quality Q            JPEG quality 1...100 (default 80)
      --subsampling 420|444  JPEG chroma subsampling (default 420; 444 keeps coloured text crisp)
      --paint-over-quality Q quality of the refresh once the screen is still, 1-100 (default 95, sent
                             as 4:4:4)
      --paint-over-delay S   seconds of stillness before that refresh, 0-3600 (default 1)
      --no-paint-over        never send that refresh
      --keepalive S          repeat the last frame after S seconds without one, 0.05-3600 (default 2)
      --orientation N        Buffer-Orientation to send, 0...255 (default 1: upright)

    Other:
      --stats-interval S     seconds between stats lines, 0.1 to 86400, or 0 for none (default 5)
      --log-level LEVEL      debug, info, warn or error (default info); logs go to stderr
      --log-format text|json log lines as 'level component message key=value…' (text, default) or
                             one JSON object a line: time, level, logger, message, fields
      --config FILE          settings as 'option = value' lines (TOML: "text", 12, true, ["a", "b"]
                             for a repeated option; default $XDG_CONFIG_HOME/screencast/agent.toml,
                             else ~/.config/screencast/agent.toml, when it exists); the command line
                             overrides them
      --print-config         print the settings in effect (file and command line) and exit
      -h, --help             this text
      --version              print the version

    Logs: a stats line every --stats-interval seconds ("stats captured=… sent=… dropped=… fps=…
    jpeg_ms=… bytes_per_frame=…") and a "summary" line at the end. jpeg_ms is the work per frame of
    the format: the JPEG encode, the I420 conversion, or (shm) the copy into shared memory. Bytes are
    the frame bodies that crossed the socket: with --format shm only a few bytes per frame (the
    picture itself stays in the shared memory).
    SIGINT/SIGTERM: finish or drop the frame being sent, close, exit 0.
    Exit codes: 0 done (also when the desktop stopped a portal share); 64 bad usage, when the
    command line must change: an unknown option, a bad value, a --output/--record whose folder is
    missing, a --socket no call could serve (its folder's parent missing, or a file there that is
    not a socket), no display (DISPLAY unset and no --display), a --display name that does not
    parse, a --monitor the display lacks, a --region outside the screen; 1 a runtime failure: the X
    display unusable or lost, no usable screen-cast portal or PipeWire (or the portal refused), a
    dump that stopped being writable (a full disk).
    """
