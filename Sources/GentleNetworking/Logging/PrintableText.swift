/// Server-controlled text made safe to print on one line: what goes into error messages, log
/// records and their excerpts.
///
/// A server chooses the bytes of a body, a header value or a JSON string that a decoding error
/// quotes. Printed raw, a CR or LF starts a forged log line, an ESC drives the terminal (colours,
/// cursor moves, a hyperlink, a changed window title), and the Unicode bidirectional controls
/// reorder what is shown. Each such character is written as an escape instead: `\r`, `\n`,
/// `\t`, and JSON's `\u001B` for the others (C0 controls, DEL, the C1 controls U+0080–U+009F,
/// the bidirectional marks U+061C, U+200E and U+200F, embeddings, overrides and isolates
/// U+202A–U+202E and U+2066–U+2069, and the line and paragraph separators U+2028–U+2029), so
/// JSON that parses, re-serialized compactly (every such character inside a string), is still
/// JSON once escaped. Everything else, backslashes included, is kept.
package enum PrintableText {
    /// `text` with every control character escaped; `text` itself when it has none (the common
    /// case, checked byte by byte without allocating).
    package static func escaping(_ text: String) -> String {
        var copy = text
        let clean = copy.withUTF8 { utf8 -> Bool in
            var index = 0
            while index < utf8.count {
                let byte = utf8[index]
                if byte < 0x20 || byte == 0x7F { return false }
                // U+0080–U+009F are C2 80 – C2 9F; U+2028–U+202E are E2 80 A8 – AE; U+2066–U+2069
                // are E2 81 A6 – A9.
                // U+061C is D8 9C; U+200E–U+200F are E2 80 8E – 8F.
                if byte == 0xC2, index + 1 < utf8.count, utf8[index + 1] < 0xA0 { return false }
                if byte == 0xD8, index + 1 < utf8.count, utf8[index + 1] == 0x9C { return false }
                if byte == 0xE2, index + 2 < utf8.count {
                    let second = utf8[index + 1]
                    let third = utf8[index + 2]
                    if second == 0x80, third == 0x8E || third == 0x8F || (0xA8...0xAE).contains(third) {
                        return false
                    }
                    if second == 0x81, (0xA6...0xA9).contains(third) { return false }
                }
                index += 1
            }
            return true
        }
        if clean { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\r": result += "\\r"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            default:
                if isControl(scalar) {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    result += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }

    /// Whether `scalar` is one of the characters ``escaping(_:)`` writes as an escape.
    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x20, 0x7F...0x9F, 0x061C, 0x200E...0x200F, 0x2028...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }
}
