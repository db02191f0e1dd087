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
/// match) or ``TransportError/Code/tlsFailure`` (a chain that does not validate).
///
/// - On Linux it is a `CurlTransport` with libcurl's public-key pinning and trust-anchor
///   options: URLSession there never delivers server-trust challenges, so it cannot pin.
/// - On Apple platforms it is a ``URLSessionTransport`` whose session delegate evaluates the
///   `SecTrust` (see `PinningTransport+Security.swift`).
///
/// Domains match the request's host exactly, case-insensitively.
public final class PinningTransport: HTTPTransportProtocol {
    /// The evaluators by domain.
    public let pinnedDomains: [String: any ServerTrustEvaluator]
    let inner: any HTTPTransportProtocol

    /// Creates a pinning transport.
    ///
    /// - Parameter pinnedDomains: Host name → evaluator. Unlisted hosts get default validation.
    public init(pinnedDomains: [String: any ServerTrustEvaluator]) {
        self.pinnedDomains = pinnedDomains
        self.inner = Self.makeInner(pinnedDomains)
    }

    /// Sends `request` through the pinned connection pool.
    ///
    /// - Throws: ``TransportError`` (``TransportError/Code/pinMismatch`` or
    ///   ``TransportError/Code/tlsFailure`` when trust fails), `CancellationError` when cancelled.
    public func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        try await inner.data(for: request)
    }

    #if canImport(CCurl)
        private static func makeInner(_ pinnedDomains: [String: any ServerTrustEvaluator]) -> any HTTPTransportProtocol
        {
            var trust: [String: CurlTrustSettings] = [:]
            for (domain, evaluator) in pinnedDomains {
                trust[domain.lowercased()] = CurlTrustSettings(evaluator.requirements.enforced)
            }
            do {
                return try CurlTransport(configuration: CurlTransport.Configuration(), trustByHost: trust)
            } catch {
                return FailingTransport(error: error)
            }
        }
    #elseif canImport(Security)
        private static func makeInner(_ pinnedDomains: [String: any ServerTrustEvaluator]) -> any HTTPTransportProtocol
        {
            makeSecurityTransport(pinnedDomains)
        }
    #else
        private static func makeInner(_ pinnedDomains: [String: any ServerTrustEvaluator]) -> any HTTPTransportProtocol
        {
            FailingTransport(
                error: TransportError(.tlsFailure, url: nil, message: "TLS pinning is not available on this platform."))
        }
    #endif
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
