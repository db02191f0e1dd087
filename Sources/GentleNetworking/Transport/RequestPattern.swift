import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Which requests a ``CannedRoute`` or a ``MatchingTransport`` answers: optionally a method,
/// an exact or regular-expression match on the host, and an exact or regular-expression match
/// on the path.
///
/// ```swift
/// RequestPattern(method: .get, path: "/api/models")          // exactly this path
/// RequestPattern(pathRegex: "^/api/model/\\d+$")             // any method
/// RequestPattern(method: .get, host: "cdn.example", path: "/logo.png")
/// ```
///
/// - A `nil` method matches every method; a request without a method counts as `GET`.
/// - An exact host matches case-insensitively and whole (`example.com` does not match
///   `api.example.com`); a host regex is case-insensitive too. A `nil` host matches every host.
/// - An exact path matches the whole, percent-decoded path, case-sensitively; the query is
///   never part of it. A path regex is searched for anywhere in the path: anchor it (`^…$`) to
///   match the whole path.
/// - A regular expression that does not compile makes the pattern match nothing (it never
///   crashes); ``hasInvalidRegex`` tells such a pattern apart.
public struct RequestPattern: Sendable, Hashable {
    enum Matcher: Sendable, Hashable {
        case exact(String)
        case regex(String)

        /// The matcher as a regular expression: an exact string escaped and anchored.
        var regex: String {
            switch self {
            case .exact(let text): "^" + NSRegularExpression.escapedPattern(for: text) + "$"
            case .regex(let pattern): pattern
            }
        }
    }

    /// The method a request must have; `nil` matches any method.
    public let method: HTTPMethod?
    let host: Matcher?
    let path: Matcher

    /// The host condition as a regular expression (an exact host escaped and anchored), or `nil`
    /// when any host matches.
    public var hostRegex: String? { host?.regex }
    /// The path condition as a regular expression (an exact path escaped and anchored).
    public var pathRegex: String { path.regex }

    /// Matches `method` (any method when `nil`), a host matching `hostRegex` (any host when
    /// `nil`) and a path matching `pathRegex`.
    ///
    /// - Parameters:
    ///   - method: `nil` (any method) by default.
    ///   - hostRegex: `nil` (any host) by default; matched case-insensitively.
    ///   - pathRegex: Searched for in the path; anchor it (`^…$`) to match the whole path.
    public init(method: HTTPMethod? = nil, hostRegex: String? = nil, pathRegex: String) {
        self.method = method
        self.host = hostRegex.map(Matcher.regex)
        self.path = .regex(pathRegex)
    }

    /// Matches `method` (any method when `nil`), exactly `host` (any host when `nil`) and
    /// exactly `path`. Characters special in regular expressions have no special meaning here.
    ///
    /// - Parameters:
    ///   - method: `nil` (any method) by default.
    ///   - host: `nil` (any host) by default; compared case-insensitively.
    ///   - path: The whole path, such as `"/api/models"`.
    public init(method: HTTPMethod? = nil, host: String? = nil, path: String) {
        self.method = method
        self.host = host.map(Matcher.exact)
        self.path = .exact(path)
    }

    /// Whether a regular expression of this pattern does not compile, so that it matches nothing.
    public var hasInvalidRegex: Bool {
        [host, path].contains { matcher in
            if case .regex(let pattern) = matcher { return (try? NSRegularExpression(pattern: pattern)) == nil }
            return false
        }
    }

    /// Whether `request` matches this pattern.
    public func matches(_ request: URLRequest) -> Bool {
        guard let url = request.url else { return false }
        if let method, (request.httpMethod ?? "GET").uppercased() != method.rawValue { return false }
        let requestPath = URLComponents(url: url, resolvingAgainstBaseURL: true)?.path ?? url.path
        if let host, !Self.matches(host, url.host ?? "", caseInsensitive: true) {
            return false
        }
        return Self.matches(path, requestPath, caseInsensitive: false)
    }

    private static func matches(_ matcher: Matcher, _ value: String, caseInsensitive: Bool) -> Bool {
        switch matcher {
        case .exact(let expected):
            return caseInsensitive ? expected.caseInsensitiveCompare(value) == .orderedSame : expected == value
        case .regex(let pattern):
            let options: NSRegularExpression.Options = caseInsensitive ? [.caseInsensitive] : []
            guard let regex = try? NSRegularExpression(pattern: pattern, options: options) else { return false }
            let range = NSRange(value.startIndex..<value.endIndex, in: value)
            return regex.firstMatch(in: value, options: [], range: range) != nil
        }
    }
}
