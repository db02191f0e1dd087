import GentleNetworking

/// Joins a base URL and a route path as text, so the base's own path and escapes survive.
enum URLJoiner {
    /// `base` with `path` appended as JustNetworking appended it (`appendingPathComponent`):
    /// the whole of `path` is a path. Every character a path cannot hold as it is, `?`, `#` and
    /// `%` included, is percent-encoded, so a value interpolated into a route
    /// (`"files/\(name)"`) can neither add a query (`a?admin=1`), cut the path with a fragment
    /// (`report#1.pdf`) nor carry an escape the server would decode (`..%2F`). Unlike
    /// `appendingPathComponent`, exactly one `/` joins them. The base's query and fragment are
    /// kept after the joined path.
    static func join(_ base: URL, _ path: String) -> URL {
        guard !path.isEmpty else { return base }
        let baseParts = split(base.absoluteString)
        var prefix = Substring(baseParts.main)
        while prefix.hasSuffix("/") && !prefix.hasSuffix("://") { prefix.removeLast() }
        var text = String(prefix) + "/" + PercentEncoding.literalPath(String(path.drop { $0 == "/" }))
        if let query = baseParts.query, !query.isEmpty { text += "?" + query }
        if let fragment = baseParts.fragment { text += "#" + fragment }
        return URL(string: text) ?? base.appendingPathComponent(path)
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
}
