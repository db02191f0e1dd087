/// Joins a base URL and a route path as text, so the base's own path and escapes survive.
enum URLJoiner {
    static func join(_ base: URL, _ path: String) -> URL {
        guard !path.isEmpty else { return base }
        let baseParts = split(base.absoluteString)
        let pathParts = split(path)

        var prefix = Substring(baseParts.main)
        while prefix.hasSuffix("/") && !prefix.hasSuffix("://") { prefix.removeLast() }
        var text = String(prefix) + "/" + pathParts.main.drop { $0 == "/" }
        let queries = [baseParts.query, pathParts.query].compactMap { $0 }.filter { !$0.isEmpty }
        if !queries.isEmpty { text += "?" + queries.joined(separator: "&") }
        if let fragment = pathParts.fragment ?? baseParts.fragment { text += "#" + fragment }

        // Encoded first: Foundation's own repair of an invalid string would encode existing escapes again.
        let encoded = encodeInvalidCharacters(text)
        return URL(string: encoded) ?? base.appendingPathComponent(path)
    }

    /// Splits `text` into what comes before the first `?` or `#`, the query and the fragment.
    private static func split(_ text: String) -> (main: Substring, query: Substring?, fragment: Substring?) {
        var rest = Substring(text)
        var fragment: Substring?
        if let hash = rest.firstIndex(of: "#") {
            fragment = rest[rest.index(after: hash)...]
            rest = rest[..<hash]
        }
        var query: Substring?
        if let question = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: question)...]
            rest = rest[..<question]
        }
        return (rest, query, fragment)
    }

    /// Percent-encodes every byte a URL cannot hold as is: controls, spaces, non-ASCII, the
    /// characters RFC 3986 excludes, and a `%` that does not start a `%XX` escape.
    private static func encodeInvalidCharacters(_ text: String) -> String {
        let invalid = Set(" \"<>\\^`{|}".utf8)
        let bytes = Array(text.utf8)
        var result = ""
        for (index, byte) in bytes.enumerated() {
            let startsEscape =
                byte == UInt8(ascii: "%") && index + 2 < bytes.count
                && isHexDigit(bytes[index + 1]) && isHexDigit(bytes[index + 2])
            if byte > 0x20 && byte < 0x7F && !invalid.contains(byte) && (byte != UInt8(ascii: "%") || startsEscape) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return result
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "F"),
            UInt8(ascii: "a")...UInt8(ascii: "f"):
            true
        default:
            false
        }
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
