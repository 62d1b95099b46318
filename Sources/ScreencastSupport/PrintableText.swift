extension String {
    /// The text with every character a terminal would act on written out instead: `\r`, `\n`, `\t`, and the
    /// other C0 controls, DEL and the C1 controls (U+0080–U+009F, among them CSI) as `\u{hex}`; a backslash is
    /// left as it is. For text from a peer (an agent's header, a URL from the command line) that goes to a
    /// terminal or a log: an ESC sequence in it cannot clear a screen or move the cursor.
    public var escapingNonPrintable: String {
        var result = ""
        result.reserveCapacity(utf8.count)
        for scalar in unicodeScalars {
            switch scalar {
            case "\r": result += "\\r"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value):
                result += "\\u{\(String(scalar.value, radix: 16))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
