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

        return URL(string: text) ?? URL(string: encodeInvalidCharacters(text)) ?? base.appendingPathComponent(path)
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

    /// Percent-encodes every byte a URL cannot hold as is; keeps `%` so existing escapes survive.
    private static func encodeInvalidCharacters(_ text: String) -> String {
        let invalid = Set(" \"<>\\^`{|}".utf8)
        var result = ""
        for byte in text.utf8 {
            if byte > 0x20 && byte < 0x7F && !invalid.contains(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return result
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
