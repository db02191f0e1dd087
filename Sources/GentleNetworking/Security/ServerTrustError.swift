/// Why the TLS certificate of a pinned host was refused.
///
/// ``PinningTransport`` throws a ``TransportError`` (code ``TransportError/Code/pinMismatch``
/// or ``TransportError/Code/tlsFailure``) whose ``TransportError/underlyingError`` is one of
/// these; through ``HTTPNetworkService`` it is the underlying error of that transport error. On
/// Apple platforms ``ServerTrustEvaluator``'s `evaluate(_:forHost:)` throws it directly.
public enum ServerTrustError: Error, Sendable, Hashable {
    /// The certificate chain did not validate (against the system roots, or against the pinned
    /// certificates used as the only trust anchors), or could not be set up for evaluation.
    case trustEvaluationFailed
    /// The server presented no certificate that could be read.
    case noCertificateFound
    /// The leaf certificate's public key could not be read, so no key pin can match it.
    case noPublicKeyFound
    /// The chain is valid, but the leaf's public key matches no pin configured for `host`.
    case certificatePinningFailed(host: String)
}
