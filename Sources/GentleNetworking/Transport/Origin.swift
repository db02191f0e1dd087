import Foundation

/// The origin of a URL (RFC 6454): scheme, host and port, with the default port filled in.
///
/// Credentials are only ever forwarded between URLs of the same origin.
public struct Origin: Hashable, Sendable, CustomStringConvertible {
    /// The lowercased scheme, such as `https`.
    public let scheme: String
    /// The lowercased host.
    public let host: String
    /// The port, or the scheme's default port (80 for http, 443 for https).
    public let port: Int?

    /// The origin of `url`, or `nil` when it has no scheme or host.
    public init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        self.scheme = scheme
        self.host = host
        switch (url.port, scheme) {
        case (let port?, _): self.port = port
        case (nil, "http"), (nil, "ws"): self.port = 80
        case (nil, "https"), (nil, "wss"): self.port = 443
        default: self.port = nil
        }
    }

    /// `scheme://host:port`.
    public var description: String {
        "\(scheme)://\(host)" + (port.map { ":\($0)" } ?? "")
    }

    /// Headers that carry credentials and must not cross to another origin.
    public static let credentialHeaders = ["Authorization", "Cookie", "Proxy-Authorization"]

    /// Whether `from` and `to` share an origin. URLs without an origin never do.
    public static func isSameOrigin(_ from: URL?, _ to: URL?) -> Bool {
        guard let from, let to, let left = Origin(from), let right = Origin(to) else { return false }
        return left == right
    }
}
