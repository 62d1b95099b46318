/// Files that are not frame dumps but are easily mistaken for one (a recording of the call, a screenshot),
/// told apart by their first bytes so the tool can say what the file is instead of a wire error.
enum ForeignFile {
    /// How many leading bytes ``kind(of:)`` looks at.
    static let bytesNeeded = 12

    /// What the file looks like, from its magic number, or nil for anything else (a dump starts with
    /// `HTTP/1.1 200 OK` or, cut mid-stream, with any bytes: only a positive match is reported).
    ///
    /// - IVF: `DKIF` (the libvpx ivfenc header); WebM/Matroska: EBML `1A 45 DF A3`; JPEG: SOI `FF D8 FF`;
    ///   PNG: `89 'PNG' 0D 0A 1A 0A`; MP4/QuickTime: `ftyp` at offset 4; GIF: `GIF8`; pcap: `D4 C3 B2 A1`
    ///   or `A1 B2 C3 D4`; pcapng: `0A 0D 0D 0A`; gzip: `1F 8B`.
    static func kind(of head: ArraySlice<UInt8>) -> String? {
        let bytes = Array(head)
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + magic.count && Array(bytes[offset..<offset + magic.count]) == magic
        }
        if starts(Array("DKIF".utf8)) { return "IVF" }
        if starts([0x1A, 0x45, 0xDF, 0xA3]) { return "WebM/Matroska" }
        if starts([0xFF, 0xD8, 0xFF]) { return "a JPEG image" }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "a PNG image" }
        if starts(Array("ftyp".utf8), at: 4) { return "MP4/QuickTime" }
        if starts(Array("GIF8".utf8)) { return "a GIF image" }
        if starts([0xD4, 0xC3, 0xB2, 0xA1]) || starts([0xA1, 0xB2, 0xC3, 0xD4]) { return "a pcap capture" }
        if starts([0x0A, 0x0D, 0x0D, 0x0A]) { return "a pcapng capture" }
        if starts([0x1F, 0x8B]) { return "gzip data" }
        return nil
    }
}
