/// H.264 byte streams (ITU-T H.264 Annex B): NAL units after start codes `00 00 01` or `00 00 00 01`;
/// `nal_unit_type` is the low 5 bits of each unit's first byte (7: SPS, 8: PPS, 5: IDR slice).
///
/// ```
///  00 00 00 01 | 67 … (SPS) | 00 00 00 01 | 68 … (PPS) | 00 00 01 | 65 … (IDR slice)
/// ```
public enum AnnexB {
    /// The NAL units of `bytes`, without their start codes.
    public static func units(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var starts: [(code: Int, payload: Int)] = []
        var i = 0
        while i + 2 < bytes.count {
            if bytes[i] == 0, bytes[i + 1] == 0, bytes[i + 2] == 1 {
                let code = i > 0 && bytes[i - 1] == 0 ? i - 1 : i
                starts.append((code, i + 3))
                i += 3
            } else {
                i += 1
            }
        }
        return starts.indices.map { n in
            let end = n + 1 < starts.count ? starts[n + 1].code : bytes.count
            return bytes[starts[n].payload..<max(starts[n].payload, end)]
        }
    }

    /// The SPS and PPS units of `bytes` in Annex B (each after `00 00 00 01`): a muxer's extradata, from which
    /// the FLV muxer writes the AVC sequence header and the MP4 muxer its `avcC`. Nil without both.
    public static func parameterSets(_ bytes: [UInt8]) -> [UInt8]? {
        var sps: [UInt8] = []
        var pps: [UInt8] = []
        for unit in units(bytes) {
            guard let first = unit.first else { continue }
            switch first & 0x1F {
            case 7: sps += [0, 0, 0, 1] + unit
            case 8: pps += [0, 0, 0, 1] + unit
            default: break
            }
        }
        return sps.isEmpty || pps.isEmpty ? nil : sps + pps
    }
}
