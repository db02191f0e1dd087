import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Which requests a ``CannedRoute`` answers: a method plus an exact or regular-expression
/// match on the path, and optionally on the host.
public struct RequestPattern: Sendable {
    enum Matcher: Sendable {
        case exact(String)
        case regex(String)
    }

    /// The method a request must have.
    public let method: HTTPMethod
    let host: Matcher?
    let path: Matcher

    /// Matches `method` and exactly `path` on any host.
    public init(method: HTTPMethod, path: String) {
        self.method = method
        self.host = nil
        self.path = .exact(path)
    }

    /// Matches `method`, exactly `host` (case-insensitively) and exactly `path`.
    public init(method: HTTPMethod, host: String, path: String) {
        self.method = method
        self.host = .exact(host)
        self.path = .exact(path)
    }

    /// Matches `method` and a path that matches the regular expression `pathRegex`.
    ///
    /// Anchor the expression (`^…$`) to match the whole path. An invalid expression matches
    /// nothing.
    public init(method: HTTPMethod, pathRegex: String) {
        self.method = method
        self.host = nil
        self.path = .regex(pathRegex)
    }

    /// Matches `method`, a host matching `hostRegex` and a path matching `pathRegex`.
    public init(method: HTTPMethod, hostRegex: String, pathRegex: String) {
        self.method = method
        self.host = .regex(hostRegex)
        self.path = .regex(pathRegex)
    }

    /// Whether `request` matches this pattern.
    public func matches(_ request: URLRequest) -> Bool {
        guard let url = request.url, (request.httpMethod ?? "GET").uppercased() == method.rawValue else {
            return false
        }
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
