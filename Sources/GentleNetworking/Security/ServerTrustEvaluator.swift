import Foundation

#if canImport(Security) && !canImport(CCurl)
    import Security
#endif

/// Decides whether a host's TLS certificate is trusted: what ``PinningTransport`` enforces for a
/// pinned domain.
///
/// The requirements are declarative so that each platform can enforce them inside the TLS
/// handshake (libcurl on Linux, Security on Apple platforms), before any request byte is sent.
/// Implement ``requirements`` to combine pins in your own way; that works on every platform.
///
/// On Apple platforms an evaluator may instead implement `evaluate(_:forHost:)` with a
/// `SecTrust`, as in the original GentleNetworking: ``PinningTransport`` then calls it in the
/// handshake, and it alone decides (it must do the default validation it wants itself). Its
/// ``requirements`` default to default validation and are not used there. A ``ServerTrustError``
/// it throws keeps its meaning (`.certificatePinningFailed` is ``TransportError/Code/pinMismatch``,
/// `.trustEvaluationFailed` is ``TransportError/Code/tlsFailure``); any other error is a
/// ``TransportError/Code/pinMismatch``.
public protocol ServerTrustEvaluator: Sendable {
    /// What the handshake must prove.
    var requirements: ServerTrustRequirements { get }

    #if canImport(Security) && !canImport(CCurl)
        /// Evaluates `trust` for `host` (Apple platforms), throwing when it is refused. By
        /// default, against ``requirements``.
        func evaluate(_ trust: SecTrust, forHost host: String) throws
    #endif
}

/// The evaluators whose `evaluate(_:forHost:)` is the default one: on Apple platforms their
/// ``ServerTrustEvaluator/requirements`` are applied directly, with a detailed reason on failure.
protocol DeclarativeServerTrustEvaluator: ServerTrustEvaluator {}

/// What a TLS handshake must prove for a pinned host.
public struct ServerTrustRequirements: Sendable, Hashable {
    /// SHA-256 hashes of acceptable DER SubjectPublicKeyInfo: the leaf's key must be one of
    /// them. Empty for no key pin.
    public var pinnedKeyHashes: Set<Data>
    /// DER certificates to pin. With default validation they must match the leaf (by its key);
    /// without it they are the only trust anchors, so a pinned self-signed certificate validates.
    public var pinnedCertificates: Set<Data>
    /// Whether the chain must also validate against the system roots and name the host. Stands
    /// even when a pin matches. Ignored when nothing is pinned: a host without pins always gets
    /// default validation, so requirements can never turn TLS verification off.
    public var performDefaultValidation: Bool

    /// Creates requirements.
    public init(
        pinnedKeyHashes: Set<Data> = [], pinnedCertificates: Set<Data> = [], performDefaultValidation: Bool = true
    ) {
        self.pinnedKeyHashes = pinnedKeyHashes
        self.pinnedCertificates = pinnedCertificates
        self.performDefaultValidation = performDefaultValidation
    }

    /// What ``PinningTransport`` enforces: these requirements, or default validation when
    /// nothing is pinned (without a pin, `performDefaultValidation: false` would accept any
    /// certificate for any name).
    var enforced: ServerTrustRequirements {
        guard pinnedKeyHashes.isEmpty, pinnedCertificates.isEmpty else { return self }
        return ServerTrustRequirements()
    }

    /// Checks that every pin could ever match: each key hash is 32 bytes (a SHA-256) and each
    /// certificate is a DER X.509 certificate.
    ///
    /// A malformed pin (the base64 text of a hash passed as its bytes, a PEM passed as DER) made
    /// every request fail after a full handshake, as `.pinMismatch` on Linux and `.tlsFailure`
    /// on Apple platforms, which reads as an attack; one bad certificate among good ones made
    /// libcurl refuse them all, while Apple platforms skipped it.
    ///
    /// - Throws: ``TransportError/Code/invalidRequest`` naming `domain` and the fault.
    func validate(forDomain domain: String) throws(TransportError) {
        if let bad = pinnedKeyHashes.first(where: { $0.count != 32 }) {
            throw TransportError(
                .invalidRequest, url: nil,
                message:
                    "A key hash pinned for \(PrintableText.escaping(domain)) is \(bad.count) bytes; a SHA-256 is 32 "
                    + "(pass the decoded bytes: Data(base64Encoded: pin), not Data(pin.utf8)).")
        }
        for certificate in pinnedCertificates {
            do {
                _ = try CertificatePinning.subjectPublicKeyInfo(ofCertificateDER: certificate)
            } catch {
                throw TransportError(
                    .invalidRequest, url: nil,
                    message:
                        "A certificate pinned for \(PrintableText.escaping(domain)) is not a DER X.509 certificate "
                        + "(for PEM text, use CertificatePinning.certificatesDER(fromPEM:)).")
            }
        }
    }
}

/// Pins the leaf certificate's public key: survives certificate renewal with the same key.
///
/// ```swift
/// PublicKeyPinningEvaluator(pinnedKeyHashes: [primaryKeyHash, backupKeyHash])
/// ```
public struct PublicKeyPinningEvaluator: ServerTrustEvaluator, DeclarativeServerTrustEvaluator {
    /// SHA-256 hashes of DER SubjectPublicKeyInfo; see ``CertificatePinning/publicKeyHash(ofCertificatePEM:)``.
    public let pinnedKeyHashes: Set<Data>
    /// Whether the chain must also validate against the system roots; `true` by default.
    public let performDefaultValidation: Bool

    /// Creates an evaluator.
    ///
    /// - Parameters:
    ///   - pinnedKeyHashes: Acceptable key hashes. Pin a backup key too, or a key rotation locks
    ///     your app out.
    ///   - performDefaultValidation: `true` by default. `false` accepts any chain whose leaf key
    ///     matches, such as a self-signed certificate. With no key pinned it has no effect:
    ///     default validation applies.
    public init(pinnedKeyHashes: Set<Data>, performDefaultValidation: Bool = true) {
        self.pinnedKeyHashes = pinnedKeyHashes
        self.performDefaultValidation = performDefaultValidation
    }

    /// The key pins, plus default validation when asked.
    public var requirements: ServerTrustRequirements {
        ServerTrustRequirements(pinnedKeyHashes: pinnedKeyHashes, performDefaultValidation: performDefaultValidation)
    }
}

/// Pins whole certificates (DER): simpler, but needs an app update at every renewal.
///
/// ```swift
/// CertificatePinningEvaluator(pinnedCertificates: [certDERData])
/// ```
public struct CertificatePinningEvaluator: ServerTrustEvaluator, DeclarativeServerTrustEvaluator {
    /// DER certificates.
    public let pinnedCertificates: Set<Data>
    /// Whether the chain must also validate against the system roots; `true` by default.
    public let performDefaultValidation: Bool

    /// Creates an evaluator.
    ///
    /// - Parameters:
    ///   - pinnedCertificates: DER certificates. Without default validation they are the only
    ///     trust anchors: the server's chain must lead to one of them.
    ///   - performDefaultValidation: `true` by default: the chain must also validate against the
    ///     system roots, and the leaf must be one of the pinned certificates (by its key). With no
    ///     certificate pinned, `false` has no effect: default validation applies.
    public init(pinnedCertificates: Set<Data>, performDefaultValidation: Bool = true) {
        self.pinnedCertificates = pinnedCertificates
        self.performDefaultValidation = performDefaultValidation
    }

    /// The certificate pins, plus default validation when asked.
    public var requirements: ServerTrustRequirements {
        ServerTrustRequirements(
            pinnedCertificates: pinnedCertificates, performDefaultValidation: performDefaultValidation)
    }
}
