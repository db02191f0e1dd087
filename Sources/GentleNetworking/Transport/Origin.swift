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

    /// Headers that carry credentials and must not cross to another origin: `Authorization`,
    /// `Cookie`, `Proxy-Authorization`, and the conventional API-key and token headers
    /// (`X-API-Key`, `Api-Key`, `ApiKey`, `X-Auth-Token`, `X-Access-Token`, `X-Session-Token`,
    /// `X-Amz-Security-Token`, `X-Goog-Api-Key`), whoever set them. Name others with
    /// ``withCredentialHeaders(_:isolation:operation:)``.
    public static let credentialHeaders = [
        "Authorization", "Cookie", "Proxy-Authorization", "X-API-Key", "Api-Key", "ApiKey", "X-Auth-Token",
        "X-Access-Token", "X-Session-Token", "X-Amz-Security-Token", "X-Goog-Api-Key",
    ]

    /// Whether the header `name` carries a credential that must not follow a redirect to another
    /// origin, and that keys an ETag entry: one of `listed` (compared case-insensitively;
    /// ``credentialHeaders`` and those in force by default), or a name that says it holds one
    /// (``isCredentialName(_:)``: `PRIVATE-TOKEN`, `X-Auth-Key`, `X-Master-Key`). Those crossed to
    /// another host when only the listed names were dropped.
    package static func isCredentialHeader(_ name: String, listed: [String] = credentialHeadersInForce) -> Bool {
        listed.contains { $0.equalsIgnoringASCIICase(name) } || isCredentialName(name)
    }

    /// Whether a header's name says its value is a credential: it holds `token` (not a page's,
    /// a continuation's or an idempotency token), `secret`, `password`, `passwd`, `credential`,
    /// `authorization` or an API key's spelling; or it is a key named by what it opens
    /// (`master-key`, `auth-key`, `access-key`, `private-key`, `client-key`,
    /// `subscription-key`, `functions-key`, `rapidapi-key`, `mashape-key`, `-` or `_`); or it
    /// is Cloudflare's `X-Auth-…`. Narrower than what the redactor hides in logs (`X-Sort-Key`,
    /// `X-Session-Id`, `Signature` follow a redirect), any case, without allocating.
    package static func isCredentialName(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { raw in
            // The shortest name that can match is `token`.
            guard raw.count >= 5 else { return false }
            // Lowercased once, on the stack: each needle is then a plain byte comparison.
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: raw.count) { buffer in
                for index in 0..<raw.count { buffer[index] = folded(raw[index]) }
                let bytes = UnsafeBufferPointer(buffer)
                if matches(bytes, xAuth, at: 0), bytes.count == xAuth.count || bytes[xAuth.count] == 0x2D {
                    return true
                }
                if contains(bytes, token) { return !tokenExceptions.contains { contains(bytes, $0) } }
                // Each position's first two bytes select the fragments that can start there (a
                // mask over `credentialFragments`): most positions select none. Trying every
                // fragment whose first byte matched cost ~1,500 instructions for `Accept`, on
                // every logged request.
                let firstBytes = credentialFirstBytes
                let secondBytes = credentialSecondBytes
                for start in 0..<(bytes.count - 1) {
                    var candidates = firstBytes[Int(bytes[start])] & secondBytes[Int(bytes[start + 1])]
                    while candidates != 0 {
                        let index = candidates.trailingZeroBitCount
                        candidates &= candidates - 1
                        if matches(bytes, credentialFragments[index], at: start) { return true }
                    }
                }
                return false
            }
        }
    }

    private static let xAuth = Array("x-auth".utf8)
    private static let token = Array("token".utf8)
    private static let tokenExceptions = ["page", "continuation", "idempotency"].map { Array($0.utf8) }
    private static let credentialFragments = [
        "secret", "password", "passwd", "credential", "authorization", "apikey", "api-key", "api_key",
        "master-key", "master_key", "auth-key", "auth_key", "access-key", "access_key", "private-key", "private_key",
        "client-key", "client_key", "subscription-key", "subscription_key", "functions-key", "rapidapi-key",
        "mashape-key",
    ].map { Array($0.utf8) }
    /// For each byte, the ``credentialFragments`` whose first byte it is, as a bit mask (bit `i`
    /// for fragment `i`).
    private static let credentialFirstBytes = fragmentMasks(byteAt: 0)
    /// For each byte, the ``credentialFragments`` whose second byte it is, as a bit mask.
    private static let credentialSecondBytes = fragmentMasks(byteAt: 1)

    /// For each byte value, the mask of ``credentialFragments`` holding it at `offset` (the
    /// list holds at most 64: a test names every one).
    private static func fragmentMasks(byteAt offset: Int) -> [UInt64] {
        var table = [UInt64](repeating: 0, count: 256)
        for (index, fragment) in credentialFragments.enumerated() where index < 64 && fragment.count > offset {
            table[Int(fragment[offset])] |= 1 << UInt64(index)
        }
        return table
    }

    /// ASCII lowercase of `byte`.
    private static func folded(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }

    /// Whether `needle` is in `bytes` at `start`.
    private static func matches(_ bytes: UnsafeBufferPointer<UInt8>, _ needle: [UInt8], at start: Int) -> Bool {
        guard bytes.count - start >= needle.count else { return false }
        for offset in 0..<needle.count where bytes[start + offset] != needle[offset] { return false }
        return true
    }

    /// Whether `bytes` holds `needle`.
    private static func contains(_ bytes: UnsafeBufferPointer<UInt8>, _ needle: [UInt8]) -> Bool {
        guard bytes.count >= needle.count else { return false }
        for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
            if matches(bytes, needle, at: start) { return true }
        }
        return false
    }

    /// The further credential headers of the current task's requests, set by
    /// ``withCredentialHeaders(_:isolation:operation:)``.
    @TaskLocal static var additionalCredentialHeaders: [String] = []

    /// The headers a redirect to another origin must drop, for a request of the current task:
    /// ``credentialHeaders`` and those named by ``withCredentialHeaders(_:isolation:operation:)``.
    static var credentialHeadersInForce: [String] {
        let additional = additionalCredentialHeaders
        return additional.isEmpty ? credentialHeaders : credentialHeaders + additional
    }

    /// Runs `operation` with `names` treated as credential headers too, through any decorator
    /// stack: the transports drop them, like ``credentialHeaders``, on a redirect to another
    /// origin. ``HTTPNetworkService`` and ``ReauthTransport`` use it for their auth service's
    /// ``AuthServiceProtocol/headerField`` (such as `X-API-Key`), and YNetwork's manager for the
    /// headers its session manager adds.
    ///
    /// - Parameters:
    ///   - names: Header names, compared case-insensitively.
    ///   - isolation: The caller's actor, inherited.
    ///   - operation: The work whose requests they apply to.
    public static func withCredentialHeaders<T>(
        _ names: [String], isolation: isolated (any Actor)? = #isolation, operation: () async throws -> T
    ) async rethrows -> T {
        let inForce = credentialHeadersInForce
        func isNew(_ name: String) -> Bool { !inForce.contains { $0.equalsIgnoringASCIICase(name) } }
        // The common case, every name already in force (`Authorization`), allocates nothing.
        guard names.contains(where: isNew) else { return try await operation() }
        let added = names.filter(isNew)
        return try await $additionalCredentialHeaders.withValue(additionalCredentialHeaders + added) {
            try await operation()
        }
    }

    /// ``withCredentialHeaders(_:isolation:operation:)`` for one name, such as an auth service's
    /// ``AuthServiceProtocol/headerField``: when the name is one of ``credentialHeaders``
    /// (`Authorization`, the usual case) it runs `operation` without building an array or reading
    /// the task-local; any other name is bound as `withCredentialHeaders` binds it.
    static func withCredentialHeader<T>(
        _ name: String, isolation: isolated (any Actor)? = #isolation, operation: () async throws -> T
    ) async rethrows -> T {
        if credentialHeaders.contains(where: { $0.equalsIgnoringASCIICase(name) }) {
            return try await operation()
        }
        return try await withCredentialHeaders([name], isolation: isolation, operation: operation)
    }

    /// Whether `from` and `to` share an origin. URLs without an origin never do.
    public static func isSameOrigin(_ from: URL?, _ to: URL?) -> Bool {
        guard let from, let to, let left = Origin(from), let right = Origin(to) else { return false }
        return left == right
    }
}
