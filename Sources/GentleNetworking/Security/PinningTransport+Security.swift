#if canImport(Security) && !canImport(CCurl)
    import Foundation
    import Security

    extension PinningTransport {
        /// A URLSession whose delegate enforces the pins, wrapped in ``URLSessionTransport``.
        static func makeSecurityTransport(
            _ pinnedDomains: [String: any ServerTrustEvaluator]
        ) -> any HTTPTransportProtocol {
            var requirements: [String: ServerTrustRequirements] = [:]
            for (domain, evaluator) in pinnedDomains {
                requirements[domain.lowercased()] = evaluator.requirements
            }
            let delegate = PinningSessionDelegate(requirements: requirements)
            let session = URLSession(configuration: .default, delegate: delegate, delegateQueue: nil)
            return URLSessionTransport(session: session)
        }
    }

    /// Evaluates server trust for pinned hosts; other hosts get the system's default handling.
    final class PinningSessionDelegate: NSObject, URLSessionDelegate, Sendable {
        private let requirements: [String: ServerTrustRequirements]

        init(requirements: [String: ServerTrustRequirements]) {
            self.requirements = requirements
        }

        func urlSession(
            _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            let space = challenge.protectionSpace
            guard space.authenticationMethod == NSURLAuthenticationMethodServerTrust, let trust = space.serverTrust,
                let required = requirements[space.host.lowercased()]
            else {
                completionHandler(.performDefaultHandling, nil)
                return
            }
            if Self.evaluate(trust, host: space.host, required) {
                completionHandler(.useCredential, URLCredential(trust: trust))
            } else {
                completionHandler(.cancelAuthenticationChallenge, nil)
            }
        }

        /// Applies `required` to `trust`; the same rules as libcurl's on Linux.
        static func evaluate(_ trust: SecTrust, host: String, _ required: ServerTrustRequirements) -> Bool {
            let pinnedCertificates = required.pinnedCertificates.compactMap {
                SecCertificateCreateWithData(nil, $0 as CFData)
            }
            if required.performDefaultValidation {
                SecTrustSetPolicies(trust, SecPolicyCreateSSL(true, host as CFString))
            } else {
                SecTrustSetPolicies(trust, SecPolicyCreateBasicX509())
                if !pinnedCertificates.isEmpty {
                    SecTrustSetAnchorCertificates(trust, pinnedCertificates as CFArray)
                    SecTrustSetAnchorCertificatesOnly(trust, true)
                }
            }
            let mustValidate = required.performDefaultValidation || !pinnedCertificates.isEmpty
            if mustValidate && !SecTrustEvaluateWithError(trust, nil) { return false }
            guard let chain = SecTrustCopyCertificateChain(trust) as? [SecCertificate], let leaf = chain.first else {
                return false
            }
            var keyPins = required.pinnedKeyHashes
            if required.performDefaultValidation {
                for certificate in required.pinnedCertificates {
                    if let hash = try? CertificatePinning.publicKeyHash(ofCertificateDER: certificate) {
                        keyPins.insert(hash)
                    }
                }
            }
            guard !keyPins.isEmpty else { return true }
            let leafDER = SecCertificateCopyData(leaf) as Data
            guard let leafHash = try? CertificatePinning.publicKeyHash(ofCertificateDER: leafDER) else { return false }
            return keyPins.contains(leafHash)
        }
    }
#endif
