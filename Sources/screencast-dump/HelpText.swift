import ScreencastSupport

/// The help texts: the tool's usage (`--help`, `help`) and each command's own (`help CMD`, `CMD --help`).
enum HelpText {
    /// The commands that have their own help, in the order the usage lists them.
    static let commands = ["inspect", "replay", "record", "extract"]

    /// The help of `command`, or nil when there is no such command.
    static func of(_ command: String) -> String? {
        switch command {
        case "inspect": inspect
        case "replay": replay
        case "record": record
        case "extract": extract
        default: nil
        }
    }

    static var usage: String {
        """
        Usage: screencast-dump <command> [options]
               screencast-dump help [<command>]     (or: screencast-dump <command> --help)
               screencast-dump --version

        A frame dump (.frames) is the exact byte stream that crossed the agent→call Unix socket
        (Protocol/frame-wire.md).

        Commands:
          inspect [--json] FILE
              Decode the stream and every body (JPEG decoded, I420 length-checked) and every sound message
              (level, duration); print a table and summary, or one JSON document.
          replay FILE [--socket PATH] [--fps N | --as-fast-as-possible] [--loop] [--wait S]
              Send the dump to a reader (the call process, or record) as a sender would.
          record [--socket PATH] --out FILE
              Listen as the call process would and record the first sender byte for byte.
          extract FILE --out DIR [--force]
              Write each body as DIR/000000.jpg, DIR/000001.jpg, … (I420 bodies as .yuv), sound as
              DIR/sound.wav

        Options for every command:
          --log-level LEVEL  debug, info, warn or error (default info); logs go to stderr
          -h, --help         the command's own help

        Option of replay and record:
        \(socketOption.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))

        Exit codes: 0 done; 64 bad usage, when the command line must change (an unknown option, a bad value,
        a FILE that is missing, a folder or unreadable, an --out whose folder is missing); 1 a runtime
        failure (a stream that breaks the wire format, a socket in use, a full disk, a reader that went
        away).
        """
    }

    /// `--socket PATH`, shared by replay and record (the main usage indents it by 2: keep it within 98 columns).
    static var socketOption: String {
        """
        --socket PATH
            The agent socket: an absolute file-system path of at most 107 bytes (a Unix socket address
            holds 108 bytes with the final NUL; never an abstract socket). Default:
            $XDG_RUNTIME_DIR/screencast/agent.sock when XDG_RUNTIME_DIR is an absolute path, else
            /tmp/screencast-$UID/agent.sock; here that is \(SocketArgument.defaultPathText).
        """
    }

    static let logLevelOption = "--log-level LEVEL\n    debug, info, warn or error (default info); logs go to stderr."

    static var inspect: String {
        """
        Usage: screencast-dump inspect [--json] [--log-level LEVEL] FILE

        Decode the dump with the socket reader's decoder (and its read sizes) and fully decode every JPEG
        body to I420, as the call process does (a raw I420 body, "Buffer-Format: I420", needs no decode: the
        reader has checked its exact length). FILE may be a regular file, a FIFO or /dev/stdin. Each frame
        is printed as soon as it is decoded, so memory stays flat however large the dump.

        Without --json: one table row per frame, then a summary line: frames, undecodable bodies, body
        bytes, the bytes read (consumed by the decoder: after a wire-format error, through the byte where it
        was detected), how the stream ended, and with Buffer-Timestamp the time span and frame rate.
        Timestamps that go backwards are counted and said; the rate is then computed over the longest run
        that does not. A truncated stream or a wire-format error is also printed on stderr.

        --json: one JSON document on stdout:
          {"frames":[FRAME,…],"end":"eof"|"truncated"|"error","error":null|ERROR}
          FRAME: {"offset":O,"contentLength":N,"bufferWidth":W,"bufferHeight":H,"orientation":V,
                  "rotation":R,"format":F,"jpegWidth":JW,"jpegHeight":JH}
            offset        byte offset of the frame's status line (empty lines before it belong to no frame)
            orientation   Buffer-Orientation (0 when absent or out of range); rotation: 0, 90, 180 or 270,
                          the clockwise turn it asks for (8 → 90, 3 → 180, 6 → 270, else 0)
            format        Buffer-Format: "JPEG" (also when absent) or "I420" (a raw picture of W x H; such a
                          frame has no jpegWidth/jpegHeight and no decodeError, but "colorRange": "limited"
                          or "full", its Buffer-Color-Range, full when absent; the table shows it in
                          brackets), or "BGRX-SHM" (the picture was in the sender's shared memory, not in
                          the dump: no jpegWidth/jpegHeight, no decodeError, but "memory": [GENERATION,
                          SLOT, VERSION])
            jpegWidth/jpegHeight: the JPEG's own size. A body that does not decode as a JPEG (one that
                          decodes only with a libjpeg warning, such as a premature end, counts as not
                          decoding) has "decodeError":"MESSAGE" instead, and decoding goes on with the
                          next frame.
            optional, after those, only when the frame carries them (screencast-agent writes both):
            "timestamp":T Buffer-Timestamp, capture time in CLOCK_MONOTONIC µs (exact unsigned 64-bit)
            "sequence":S  Buffer-Sequence, the sender's frame counter (exact unsigned 64-bit)
            "capture":{"Capture-Display":…}  the Capture-* fields given (what the agent captures;
                                             frame-wire.md §2.7)
            "damage":[[X,Y,W,H],…]  Buffer-Damage, what changed since the frame before ([] for none; §2.9);
                          a malformed one is "damageFault":KIND instead (syntax, outsideBuffer, …)
          ERROR: {"kind":K,"message":M,"offset":B}
            kind          badStatusLine, badHeaderLine, missingHeader, badHeaderValue, conflictingHeaders,
                          headerTooLarge, bodyTooLarge or bodyLengthMismatch (an I420 body of the wrong
                          size)
            message       what is wrong, ending with where it was detected: "(detected at byte N, offset
                          N-1)"
            offset        the byte offset (from 0, like a frame's offset) at which the fault was detected

        \(logLevelOption)

        Exit codes: 0 clean end (eof), 1 truncated or wire-format error (or not a frame dump at all), 64 bad
        usage (FILE missing, a folder or unreadable included).
        """
    }

    static var replay: String {
        """
        Usage: screencast-dump replay FILE [--socket PATH] [--fps N | --as-fast-as-possible] [--loop]
                                          [--wait S] [--log-level LEVEL]

        Send the dump to a reader (the call process, or screencast-dump record) as a sender would: the
        frames byte for byte, then a faulty or truncated tail as is (a dump that breaks the wire format is
        sent up to and including its fault).

        Pacing (default): keep the spacing of Buffer-Timestamp when the frames have it, else 30 fps (a gap
        that is negative or above 5 s is replaced by one frame at 30 fps). Frames the reader is too slow for
        are dropped, newest wins (as the agent does), and counted. When the reader goes away, replay logs
        "reader gone, waiting up to S s" once and waits that long for a reader to connect again; then it
        goes on where it was, or gives up (exit 1).
        --fps N                 pace at N frames per second (0.01 to 1000) instead.
        --as-fast-as-possible   no pacing and no loss: each frame waits until the reader took the previous
                                one; a frame lost because the reader went away ends the replay at once (exit
                                1).
        --loop                  repeat the well-framed part until interrupted. The first pass is byte-exact;
                                later passes re-encode frames that carry Buffer-Timestamp or
                                Buffer-Sequence, with timestamps shifted by the dump's timestamp span plus
                                one typical gap per pass and sequence numbers continuing, so the stream
                                looks like a live sender's.
        --wait S                seconds to wait for a reader: at the start, for a paced replay's reader to
                                come back, and for the reader to take the last frame at the end (default
                                10).

        While it runs longer than 5 s, a progress line every 5 s on stderr (frames sent, bytes, fps,
        dropped); at the end one summary line (offered, sent, bytes, dropped, elapsed time, fps;
        "interrupted" after SIGINT/SIGTERM). When it exits 1, one more line says why (e.g. "the reader went
        away; 3 of 40 frames dropped").

        \(socketOption)

        \(logLevelOption)

        Exit codes: 0 everything was taken by the reader (paced: drops of a slow but present reader are
        allowed), or interrupted; 1 no reader within --wait, the reader went away (lossless: at all; paced:
        for longer than --wait, or while the last frames were sent), the last frame not taken within --wait,
        or FILE not readable to the end; 64 bad usage (FILE missing, a folder or unreadable included).
        """
    }

    static var record: String {
        """
        Usage: screencast-dump record --out FILE [--socket PATH] [--log-level LEVEL]

        Listen on the socket as the call process would and write the first sender's bytes to FILE exactly as
        they were read, until its stream ends or SIGINT/SIGTERM. The recording is written to FILE.partial
        and renamed at the end, so a failed start never destroys an existing FILE.

        - A connection that sends nothing (a probe, a sender that gave up) is ignored; the next sender is
          recorded. A second sender while one is being recorded is refused.
        - A clean end between frames ends the recording: exit 0.
        - A stream that breaks the wire format: the recording ends with the read that found the fault. Reads
          are whole 16 KiB chunks between bodies, so FILE may go on up to one such read past the fault
          point; it holds the fault and reproduces the same error when inspected or replayed. Exit 1.
        - A stream that ends inside a frame (truncated) or a failed read: exit 1.

        While it runs longer than 5 s, a progress line every 5 s on stderr (frames, bytes, fps) once a
        sender sends; at the end one summary line, always: frames, bytes, elapsed time, fps and how it ended
        ("eof", "error: …", "interrupted"). When it exits 1, one more line says why.

        \(socketOption)

        \(logLevelOption)

        Exit codes: 0 clean end or interrupted, 1 broken or truncated stream, socket in use or unusable,
        FILE not writable (a full disk); 64 bad usage (the folder of FILE missing included).
        """
    }

    static var extract: String {
        """
        Usage: screencast-dump extract FILE --out DIR [--force] [--log-level LEVEL]

        Decode the dump and write each frame's body, exactly as sent, as DIR/000000.jpg, DIR/000001.jpg, …
        in stream order (bodies that are not JPEGs too: the names say the intent, not a check). A raw I420
        body ("Buffer-Format: I420") is written as DIR/NNNNNN.yuv instead, exactly as sent: planar BT.601
        I420 of Buffer-Width x Buffer-Height in the range its Buffer-Color-Range says (limited from
        screencast-agent: view it with e.g. ffmpeg -f rawvideo -pix_fmt yuv420p -s WxH -i 000000.yuv
        000000.png; full, or no Buffer-Color-Range: -pix_fmt yuvj420p). Sound messages (screencast-agent
        --audio) go into DIR/sound.wav (16-bit PCM at their rate and channels; messages in another
        format into one file per format, DIR/sound-16000hz-1ch.wav, at most 8). DIR is made in a folder
        that exists (a missing parent is refused: a typo leaves no tree of folders).
        The summary on stderr says "wrote N bodies" and how the stream ended.

        --force   write into a folder that already holds files (same-named files are replaced, others are
                  left). Without it such a folder is refused, so the bodies of two runs never mix.

        \(logLevelOption)

        Exit codes: 0 clean end, 1 truncated or wire-format error (the bodies before it are written), a
        folder that holds files, or a file that cannot be written; 64 bad usage (FILE missing, a folder or
        unreadable included).
        """
    }
}
