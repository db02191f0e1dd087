// Client code in the original GentleNetworking's shape, compiled against our library with its
// Apple branches taken: it must keep compiling after a change of import. Never run.
import Foundation
import GentleNetworking
import Security

/// An evaluator as the original library's users wrote them: `evaluate(_:forHost:)` alone.
struct HostAllowListEvaluator: ServerTrustEvaluator {
    let allowedHosts: Set<String>

    func evaluate(_ trust: SecTrust, forHost host: String) throws {
        guard allowedHosts.contains(host) else { throw ServerTrustError.certificatePinningFailed(host: host) }
        var error: CFError?
        guard SecTrustEvaluateWithError(trust, &error) else { throw ServerTrustError.trustEvaluationFailed }
    }
}

/// Our own evaluators are still called with a `SecTrust`, as the original's were.
func checkWithBuiltInEvaluator(_ trust: SecTrust) throws {
    try PublicKeyPinningEvaluator(pinnedKeyHashes: []).evaluate(trust, forHost: "api.example.com")
}

/// Both kinds go into one pin list.
func makePinnedTransport() -> PinningTransport {
    PinningTransport(pinnedDomains: [
        "api.example.com": HostAllowListEvaluator(allowedHosts: ["api.example.com"]),
        "cdn.example.com": CertificatePinningEvaluator(pinnedCertificates: []),
    ])
}
