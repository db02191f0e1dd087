import Foundation

extension String.StringInterpolation {
    /// Appends `json` pretty-printed, for debugging: `"\(json: data)"`.
    ///
    /// Laid out as `JSONSerialization`'s `.prettyPrinted` lays it out (two spaces per level,
    /// `"key" : value`), but keeping the keys in the order the data has them and every string
    /// and number as written, so the output is the same on every platform and reads like the
    /// body it came from. Appends `Invalid JSON data` when `json` does not parse (a JSON fragment
    /// such as `"text"` or `42` does). The whole value is printed, up to
    /// `PrettyJSON.maxOutputBytes` (16 MiB; the rest is left out, and the text says how much): a
    /// deeply nested body indents every line, so 10 MB of hostile JSON would otherwise print as
    /// gigabytes. Do not log bodies that may hold secrets.
    public mutating func appendInterpolation(json: Data) {
        guard let text = PrettyJSON.text(json) else {
            appendLiteral("Invalid JSON data")
            return
        }
        appendLiteral(text)
    }
}

/// Pretty-printed JSON text.
enum PrettyJSON {
    /// The most bytes of pretty-printed text: 16 MiB.
    static let maxOutputBytes = 16 << 20

    /// The note that ends text cut at `limit` bytes, with how much of the input was left out.
    static func note(_ left: Int, limit: Int) -> String {
        "\n… (output cut at \(limit) bytes; \(left) bytes of the JSON not shown)"
    }

    /// `data` pretty-printed in its own key order, or `nil` when it is not JSON.
    ///
    /// `JSONSerialization` decides what is JSON (and its nesting limit bounds the indentation);
    /// UTF-8 text is then re-indented as written. Other encodings `JSONSerialization` reads
    /// (UTF-16, UTF-32) are printed from the parsed value, with sorted keys.
    static func text(_ data: Data, limit: Int = maxOutputBytes) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else {
            return nil
        }
        return reindented(data, limit: limit) ?? text(object: object, limit: limit)
    }

    /// `object` (from `JSONSerialization`) pretty-printed with sorted keys, at most `limit`
    /// bytes: written compact (about the size it was parsed from), then re-indented in one
    /// capped pass. (Pretty-printed by `JSONSerialization`, a 1 MiB UTF-16 body nested 512 deep
    /// made 269 MB of indentation before any limit could apply.)
    static func text(object: Any, limit: Int = maxOutputBytes) -> String? {
        guard
            let compact = try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
        else { return nil }
        return reindented(compact, limit: limit)
    }

    /// Valid UTF-8 JSON text laid out like `.prettyPrinted`, tokens kept as written; `nil` for
    /// text that is not UTF-8 (a NUL byte means UTF-16 or UTF-32 here, as JSON text has none).
    ///
    /// One pass, no recursion: whitespace between tokens is dropped, strings are copied byte
    /// for byte (escapes included), and structure characters get their line breaks.
    static func reindented(_ data: Data, limit: Int = maxOutputBytes) -> String? {
        var bytes = [UInt8](data)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        guard !bytes.contains(0), String(validating: bytes, as: UTF8.self) != nil else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count * 2)
        var depth = 0
        var inString = false
        var escaped = false
        func newline() {
            output.append(0x0A)
            output.append(contentsOf: repeatElement(0x20, count: 2 * depth))
        }
        var index = 0
        while index < bytes.count {
            if output.count > limit {
                output.removeLast(output.count - limit)
                return String(decoding: output, as: UTF8.self) + note(bytes.count - index, limit: limit)
            }
            let byte = bytes[index]
            index += 1
            if inString {
                output.append(byte)
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D:
                continue
            case UInt8(ascii: "\""):
                inString = true
                output.append(byte)
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                output.append(byte)
                while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
                let close = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                if index < bytes.count, bytes[index] == close {
                    // An empty container, as `.prettyPrinted` writes it: a blank line inside.
                    output.append(0x0A)
                    newline()
                    output.append(close)
                    index += 1
                } else {
                    depth += 1
                    newline()
                }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth = max(0, depth - 1)
                newline()
                output.append(byte)
            case UInt8(ascii: ","):
                output.append(byte)
                newline()
            case UInt8(ascii: ":"):
                output.append(contentsOf: Array(" : ".utf8))
            default:
                output.append(byte)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
