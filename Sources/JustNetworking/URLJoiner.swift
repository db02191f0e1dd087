import GentleNetworking

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
        PercentEncoding.invalidURLCharacters(text)
    }
}
