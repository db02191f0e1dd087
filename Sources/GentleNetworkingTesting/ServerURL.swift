import Foundation
import GentleNetworking

/// URLs on a test server, formed from a path so that no argument can point them anywhere else.
package enum ServerURL {
    /// The URL for `path` (with an optional `?query`) on the server at `baseURL`, which is
    /// `scheme://host:port` with no path. The result always has `baseURL`'s scheme, host and port.
    ///
    /// The argument is taken as path text, whatever it looks like (see ``target(_:)``), so
    /// `"//evil.example/x"` and `"http://evil.example/"` stay on this server. Should the result
    /// not parse (it always does for a `scheme://host:port` base), `baseURL` is returned.
    package static func url(_ path: String, on baseURL: URL) -> URL {
        URL(string: baseURL.absoluteString + target(path)) ?? baseURL
    }

    /// `text` as an origin-form request target: `/path` and, when `text` has a `?`, `?query`.
    ///
    /// - Everything before the first `?` is the path; leading slashes are collapsed to one (or
    ///   one is added), so it can never name a host. Everything after it is the query.
    /// - Bytes a path (or query) may not hold are percent-encoded as UTF-8, including `#` (so
    ///   a fragment is sent as part of the path or query), `\`, spaces and control characters.
    ///   A valid escape such as `%20` is kept as written; a `%` not followed by two hex digits
    ///   becomes `%25`.
    /// - Dot segments (`/a/../b`) are kept as written; the empty string is `/`.
    package static func target(_ text: String) -> String {
        let queryStart = text.firstIndex(of: "?")
        let path = text[..<(queryStart ?? text.endIndex)].drop { $0 == "/" }
        var target = "/" + PercentEncoding.path(String(path))
        if let queryStart {
            target += "?" + PercentEncoding.query(String(text[text.index(after: queryStart)...]))
        }
        return target
    }
}
