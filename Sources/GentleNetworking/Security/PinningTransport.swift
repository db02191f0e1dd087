import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends requests with TLS pinning for the listed domains; other domains keep default
/// validation.
///
/// ```swift
/// let service = HTTPNetworkService(
///     transport: PinningTransport(
///         pinnedDomains: [
///             "api.example.com": PublicKeyPinningEvaluator(pinnedKeyHashes: [primaryKeyHash, backupKeyHash])
///         ]
///     )
/// )
/// ```
///
/// A pin failure aborts the TLS handshake, so no request byte reaches the server, and surfaces
/// as ``TransportError`` with code ``TransportError/Code/pinMismatch`` (a key that does not
/// match) or ``TransportError/Code/tlsFailure`` (a chain that does not validate), whose
/// ``TransportError/underlyingError`` is a ``ServerTrustError``:
/// ``ServerTrustError/certificatePinningFailed(host:)`` for a key that matches no pin,
/// ``ServerTrustError/trustEvaluationFailed`` for a chain that does not validate.
///
/// - On Linux it is a `CurlTransport` with libcurl's public-key pinning and trust-anchor
///   options: URLSession there never delivers server-trust challenges, so it cannot pin.
/// - On Apple platforms it is a ``URLSessionTransport`` over a session made with the given
///   `URLSessionConfiguration`, whose delegate evaluates the `SecTrust` (see
///   `PinningTransport+Security.swift`).
///
/// Domains match the request's host exactly, case-insensitively and ignoring one trailing dot
/// (`api.example.com.` is `api.example.com`). Two domains that name the same host that way make
/// every request fail with ``TransportError/Code/invalidRequest``.
public final class PinningTransport: HTTPTransportProtocol {
    /// The evaluators by domain.
    public let pinnedDomains: [String: any ServerTrustEvaluator]
    var inner: any HTTPTransportProtocol { innerExchange.transport }
    /// The inner transport, with what it can do looked up once (it holds `inner`).
    let innerExchange: InnerTransport
    /// `httpAdditionalHeaders` of the configuration, added by this transport where the session
    /// does not add them itself (Linux).
    private let additionalHeaders: ConfigurationHeaders
    /// `timeoutIntervalForRequest` of the configuration, for requests that keep the default
    /// `timeoutInterval` (60 s), where the session does not apply it itself (Linux).
    private let requestTimeout: TimeInterval?
    /// The pinned hosts' keys (``PinnedHost/key(_:)``), for the plain-`http` refusal.
    private let pinnedHostKeys: Set<String>

    /// Creates a pinning transport.
    ///
    /// - Parameters:
    ///   - pinnedDomains: Host name → evaluator. Unlisted hosts get default validation.
    ///   - configuration: The session settings; `.default` by default. On Apple platforms the
    ///     whole configuration applies except `urlCache`: none is used (a response another
    ///     session stored in the shared cache would be served without a pin check). On Linux (libcurl) these apply: `timeoutIntervalForRequest`
    ///     caps the connect timeout (30 s at most, as ``URLSessionTransport``'s default) and is
    ///     the idle timeout of requests that keep their default `timeoutInterval`,
    ///     `timeoutIntervalForResource` limits a whole transfer, `httpMaximumConnectionsPerHost`
    ///     limits connections per host, and `httpAdditionalHeaders` are added to requests that do
    ///     not set those headers; cookies, caching, proxies and the other settings do not.
    public init(
        pinnedDomains: [String: any ServerTrustEvaluator], configuration: URLSessionConfiguration = .default
    ) {
        self.pinnedDomains = pinnedDomains
        self.pinnedHostKeys = Set(pinnedDomains.keys.map(PinnedHost.key))
        self.innerExchange = InnerTransport(Self.makeInner(pinnedDomains, configuration))
        #if canImport(CCurl)
            self.additionalHeaders = ConfigurationHeaders(configuration)
            self.requestTimeout = configuration.timeoutIntervalForRequest
        #else
            self.additionalHeaders = ConfigurationHeaders()
            self.requestTimeout = nil
        #endif
    }

    /// Sends `request` through the pinned connection pool.
    ///
    /// - Throws: ``TransportError`` (``TransportError/Code/pinMismatch`` or
    ///   ``TransportError/Code/tlsFailure`` when trust fails, with a ``ServerTrustError`` as
    ///   underlying error), `CancellationError` when cancelled.
    public func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        try await send(request) { try await inner.data(for: $0) }
    }

    /// Streams `request` through the pinned connection pool (natively on Linux), with the same
    /// trust checks before any byte is sent.
    public func stream(for request: URLRequest) async throws -> (HTTPByteStream, HTTPURLResponse) {
        try await send(request) { try await inner.stream(for: $0) }
    }

    /// Runs `operation` with the ``prepared(_:)`` request, reporting a trust failure with its
    /// ``ServerTrustError``: what every entry point of this transport does.
    func send<Result>(
        _ request: URLRequest, _ operation: (URLRequest) async throws -> Result
    ) async throws -> Result {
        let request = try prepared(request)
        do {
            return try await operation(request)
        } catch {
            throw trustFailure(error, request: request)
        }
    }

    /// `request` with the configuration's additional headers it does not set itself, and the
    /// configuration's request timeout when it keeps the default one.
    ///
    /// - Throws: ``TransportError`` (`.invalidRequest`, naming the header) for an additional
    ///   header that is not a valid field: `setValue` would drop it without a word on Linux;
    ///   (`.invalidRequest`, naming the host) for an `http` URL whose host is pinned.
    func prepared(_ request: URLRequest) throws(TransportError) -> URLRequest {
        // A pinned host over plain http has no certificate to check: refused on every platform
        // (each redirect hop is checked the same way: by `CurlTransport` on Linux, by
        // `cleartextRefusal` as the session transport's hop check on Apple platforms).
        if let url = request.url, let refusal = Self.cleartextRefusal(for: url, pinnedHosts: pinnedHostKeys) {
            throw refusal
        }
        var request = request
        if let requestTimeout, request.timeoutInterval == URLRequest.defaultTimeout {
            request.timeoutInterval = requestTimeout
        }
        try additionalHeaders.add(to: &request)
        return request
    }

    /// The refusal of `url` when it is plain `http` to one of `pinnedHosts` (keys as
    /// ``PinnedHost/key(_:)`` makes them), else `nil`: such a request, or a redirect's hop, would
    /// reach a pinned host with no certificate to check.
    static func cleartextRefusal(for url: URL, pinnedHosts: Set<String>) -> TransportError? {
        guard url.scheme?.equalsIgnoringASCIICase("http") == true, let host = url.host,
            pinnedHosts.contains(PinnedHost.key(host))
        else { return nil }
        return TransportError(
            .invalidRequest, url: url,
            message:
                "The host \(PrintableText.escaping(host)) is pinned, so it is only reached over https; "
                + "this request (or redirect) would have gone to it over plain http.")
    }

    /// A trust failure for a pinned host with its ``ServerTrustError`` as underlying error; any
    /// other error unchanged.
    ///
    /// The host is the one the failing connection went to (`error.url`: after a redirect, the
    /// hop's, not the first request's). On Linux a ``TransportError/Code/tlsFailure`` is
    /// ``ServerTrustError/trustEvaluationFailed`` only when the chain did not verify (libcurl's
    /// codes 60 and 77); a handshake that failed otherwise (plain HTTP on the port, garbage, a
    /// TLS alert) keeps libcurl's error, as on Apple platforms, where no trust evaluation runs.
    func trustFailure(_ error: any Error, request: URLRequest) -> any Error {
        guard let error = error as? TransportError, !(error.underlyingError is ServerTrustError),
            let host = error.url?.host ?? request.url?.host,
            pinnedDomains.keys.contains(where: { PinnedHost.key($0) == PinnedHost.key(host) })
        else { return error }
        let trustError: ServerTrustError
        switch error.code {
        case .pinMismatch: trustError = .certificatePinningFailed(host: host)
        case .tlsFailure:
            #if canImport(CCurl)
                // CURLE_PEER_FAILED_VERIFICATION (60), CURLE_SSL_CACERT_BADFILE (77).
                guard let curl = error.underlyingError as? CurlError, curl.code == 60 || curl.code == 77
                else { return error }
            #endif
            trustError = .trustEvaluationFailed
        default: return error
        }
        return TransportError(error.code, url: error.url, message: error.message, underlyingError: trustError)
    }

    #if canImport(CCurl)
        private static func makeInner(
            _ pinnedDomains: [String: any ServerTrustEvaluator], _ configuration: URLSessionConfiguration
        ) -> any HTTPTransportProtocol {
            do {
                let trust = try checkedTable(pinnedDomains).mapValues {
                    CurlTrustSettings($0.requirements.enforced)
                }
                let settings = CurlTransport.Configuration(
                    connectTimeout: min(30, configuration.timeoutIntervalForRequest),
                    totalTimeout: configuration.timeoutIntervalForResource,
                    maxConnectionsPerHost: configuration.httpMaximumConnectionsPerHost)
                return try CurlTransport(configuration: settings, trustByHost: trust)
            } catch {
                return FailingTransport(error: error)
            }
        }
    #elseif canImport(Security)
        private static func makeInner(
            _ pinnedDomains: [String: any ServerTrustEvaluator], _ configuration: URLSessionConfiguration
        ) -> any HTTPTransportProtocol {
            makeSecurityTransport(pinnedDomains, configuration: configuration)
        }
    #else
        private static func makeInner(
            _ pinnedDomains: [String: any ServerTrustEvaluator], _ configuration: URLSessionConfiguration
        ) -> any HTTPTransportProtocol {
            FailingTransport(
                error: TransportError(.tlsFailure, url: nil, message: "TLS pinning is not available on this platform."))
        }
    #endif
}

extension PinningTransport {
    /// `pinnedDomains` keyed as ``PinnedHost/table(_:)`` keys them, every evaluator's pins
    /// checked (``ServerTrustRequirements/validate(forDomain:)``): what each platform builds on.
    ///
    /// - Throws: ``TransportError/Code/invalidRequest`` for two domains naming one host, a domain
    ///   that is not plain ASCII, or a pin that could never match.
    static func checkedTable(
        _ pinnedDomains: [String: any ServerTrustEvaluator]
    ) throws(TransportError) -> [String: any ServerTrustEvaluator] {
        let table = try PinnedHost.table(pinnedDomains)
        for (domain, evaluator) in table.sorted(by: { $0.key < $1.key }) {
            try evaluator.requirements.validate(forDomain: domain)
        }
        return table
    }
}

extension URLRequest {
    /// The `timeoutInterval` of a request that sets none: 60 s.
    static let defaultTimeout: TimeInterval = 60
}

/// Fails every request with one error: what a transport that could not be built does, rather
/// than crashing or silently sending unpinned.
struct FailingTransport: HTTPTransportProtocol {
    let error: any Error

    func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        throw error
    }
}

#if canImport(CCurl)
    extension CurlTrustSettings {
        /// The libcurl options that enforce `requirements`.
        init(_ requirements: ServerTrustRequirements) {
            var settings = CurlTrustSettings()
            settings.pinnedKeyHashes = Array(requirements.pinnedKeyHashes)
            settings.verifyPeer = requirements.performDefaultValidation
            settings.verifyHost = requirements.performDefaultValidation
            if !requirements.pinnedCertificates.isEmpty {
                let certificates = requirements.pinnedCertificates.sorted {
                    $0.base64EncodedString() < $1.base64EncodedString()
                }
                if requirements.performDefaultValidation {
                    // The system roots validate the chain; the leaf must be a pinned certificate.
                    // `ServerTrustRequirements.validate` refuses a certificate that does not
                    // parse before settings are built; were one to get here, it pins a hash no
                    // key has, failing closed (dropping it could leave no pin at all).
                    settings.pinnedKeyHashes += certificates.map {
                        (try? CertificatePinning.publicKeyHash(ofCertificateDER: $0)) ?? SHA256Digest.hash($0)
                    }
                } else {
                    // The pinned certificates are the only trust anchors.
                    settings.trustAnchorsPEM = Data(CertificatePinning.pem(fromDER: certificates).utf8)
                    settings.verifyPeer = true
                }
            }
            self = settings
        }
    }
#endif
