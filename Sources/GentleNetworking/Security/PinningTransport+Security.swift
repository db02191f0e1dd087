#if canImport(Security) && !canImport(CCurl)
    import Foundation
    import Security

    #if canImport(FoundationNetworking)
        import FoundationNetworking  // the Apple type-check only (AppleCheck/)
    #endif

    extension PinningTransport {
        /// A URLSession whose delegate enforces the pins, wrapped in ``URLSessionTransport``, and
        /// wrapped again so that a refused evaluation surfaces as ``TransportError``
        /// (`.pinMismatch` or `.tlsFailure`) instead of the `CancellationError` that
        /// `.cancelAuthenticationChallenge` turns into.
        static func makeSecurityTransport(
            _ pinnedDomains: [String: any ServerTrustEvaluator], configuration: URLSessionConfiguration
        ) -> any HTTPTransportProtocol {
            let evaluators: [String: any ServerTrustEvaluator]
            do {
                evaluators = try checkedTable(pinnedDomains)
            } catch {
                return FailingTransport(error: error)
            }
            let ledger = TrustFailureLedger()
            let delegate = PinningSessionDelegate(evaluators: evaluators, ledger: ledger)
            // No URL cache: a response another (unpinned) session stored in the shared
            // `URLCache` would be served from it with no connection, so no pin check at all.
            let own = (configuration.copy() as? URLSessionConfiguration) ?? .ephemeral
            own.urlCache = nil
            let session = URLSession(configuration: own, delegate: delegate, delegateQueue: nil)
            // Each redirect's hop to a pinned host over plain http is refused, as the first
            // request is (`prepared`).
            let pinnedHosts = Set(evaluators.keys.map(PinnedHost.key))
            let transport = OwnedSessionTransport(session: session) { url in
                PinningTransport.cleartextRefusal(for: url, pinnedHosts: pinnedHosts)
            }
            return TrustFailureReportingTransport(inner: transport, ledger: ledger)
        }
    }

    /// A ``URLSessionTransport`` over a session made for it alone. A session holds its delegate
    /// strongly until it is invalidated, so the session is invalidated when the transport goes
    /// (a request in flight keeps the transport alive until it ends).
    final class OwnedSessionTransport: HTTPTransportProtocol {
        private let inner: URLSessionTransport

        init(session: URLSession, redirectHopCheck: @escaping @Sendable (URL) -> TransportError?) {
            inner = URLSessionTransport(session: session, redirectApprover: nil, redirectHopCheck: redirectHopCheck)
        }

        deinit {
            inner.session.finishTasksAndInvalidate()
        }

        func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
            try await inner.data(for: request)
        }

        func stream(for request: URLRequest) async throws -> (HTTPByteStream, HTTPURLResponse) {
            try await inner.stream(for: request)
        }
    }

    extension ServerTrustEvaluator {
        /// Evaluates `trust` for `host` against ``requirements`` (default validation when
        /// nothing is pinned), the check ``PinningTransport`` makes in the TLS handshake.
        ///
        /// - Throws: ``ServerTrustError`` when the trust is refused.
        public func evaluate(_ trust: SecTrust, forHost host: String) throws {
            if let failure = PinningSessionDelegate.evaluate(trust, host: host, requirements.enforced) {
                throw failure.trustError(host: host)
            }
        }

        /// Default validation (Apple platforms): what an evaluator that implements only
        /// `evaluate(_:forHost:)`, as the original GentleNetworking's did, declares.
        public var requirements: ServerTrustRequirements { ServerTrustRequirements() }
    }

    /// Evaluates server trust for pinned hosts; other hosts get the system's default handling.
    /// A refusal is recorded in the ledger, by host, before the challenge is cancelled.
    final class PinningSessionDelegate: NSObject, URLSessionDelegate, Sendable {
        private let evaluators: [String: any ServerTrustEvaluator]
        private let ledger: TrustFailureLedger

        init(evaluators: [String: any ServerTrustEvaluator], ledger: TrustFailureLedger) {
            self.evaluators = evaluators
            self.ledger = ledger
        }

        /// `evaluator`'s verdict on `trust`: our evaluators' requirements applied directly (with
        /// a detailed reason), any other evaluator's own `evaluate(_:forHost:)`.
        static func verdict(
            of evaluator: any ServerTrustEvaluator, on trust: SecTrust, host: String
        ) -> TrustEvaluationFailure? {
            if evaluator is any DeclarativeServerTrustEvaluator {
                return evaluate(trust, host: host, evaluator.requirements.enforced)
            }
            do {
                try evaluator.evaluate(trust, forHost: host)
                return nil
            } catch {
                return TrustEvaluationFailure(refusal: error, host: host)
            }
        }

        // Server trust is a session-level challenge: it is delivered here, not to a task delegate.
        func urlSession(
            _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            let space = challenge.protectionSpace
            guard space.authenticationMethod == NSURLAuthenticationMethodServerTrust, let trust = space.serverTrust,
                let evaluator = evaluators[PinnedHost.key(space.host)]
            else {
                completionHandler(.performDefaultHandling, nil)
                return
            }
            if let failure = Self.verdict(of: evaluator, on: trust, host: space.host) {
                ledger.record(failure, host: space.host)
                completionHandler(.cancelAuthenticationChallenge, nil)
            } else {
                completionHandler(.useCredential, URLCredential(trust: trust))
            }
        }

        /// Applies `required` to `trust`, the same rules as libcurl's on Linux: `nil` when it
        /// holds, otherwise why not.
        static func evaluate(
            _ trust: SecTrust, host: String, _ required: ServerTrustRequirements
        ) -> TrustEvaluationFailure? {
            let pinnedCertificates = required.pinnedCertificates.compactMap {
                SecCertificateCreateWithData(nil, $0 as CFData)
            }
            // Fail closed: pins that cannot be read are no reason to accept any certificate.
            if !required.pinnedCertificates.isEmpty, pinnedCertificates.isEmpty {
                return TrustEvaluationFailure(
                    reason: .untrustedChain, message: "No pinned certificate for \(host) is valid DER.")
            }
            var statuses: [OSStatus] = []
            if required.performDefaultValidation {
                statuses.append(SecTrustSetPolicies(trust, SecPolicyCreateSSL(true, host as CFString)))
            } else {
                statuses.append(SecTrustSetPolicies(trust, SecPolicyCreateBasicX509()))
                if !pinnedCertificates.isEmpty {
                    statuses.append(SecTrustSetAnchorCertificates(trust, pinnedCertificates as CFArray))
                    statuses.append(SecTrustSetAnchorCertificatesOnly(trust, true))
                }
            }
            if let status = statuses.first(where: { $0 != errSecSuccess }) {
                return TrustEvaluationFailure(
                    reason: .untrustedChain, message: "The trust of \(host) could not be set up (status \(status)).")
            }
            let mustValidate = required.performDefaultValidation || !pinnedCertificates.isEmpty
            if mustValidate {
                var error: CFError?
                if !SecTrustEvaluateWithError(trust, &error) {
                    let reason = error.map { ($0 as Error).localizedDescription } ?? "unknown reason"
                    return TrustEvaluationFailure(
                        reason: .untrustedChain, message: "The certificate chain of \(host) is not trusted: \(reason)")
                }
            }
            guard let chain = SecTrustCopyCertificateChain(trust) as? [SecCertificate], let leaf = chain.first else {
                return TrustEvaluationFailure(
                    reason: .noCertificate, message: "The certificate chain of \(host) could not be read.")
            }
            var keyPins = required.pinnedKeyHashes
            if required.performDefaultValidation {
                for certificate in required.pinnedCertificates {
                    if let hash = try? CertificatePinning.publicKeyHash(ofCertificateDER: certificate) {
                        keyPins.insert(hash)
                    }
                }
            }
            // A key pin is expected when key hashes are pinned, or certificates are pinned next to
            // default validation; then a leaf matching none of them (or no readable pin) fails.
            let expectsKeyPin =
                !required.pinnedKeyHashes.isEmpty
                || (required.performDefaultValidation && !required.pinnedCertificates.isEmpty)
            guard expectsKeyPin else { return nil }
            let leafDER = SecCertificateCopyData(leaf) as Data
            guard let leafHash = try? CertificatePinning.publicKeyHash(ofCertificateDER: leafDER) else {
                return TrustEvaluationFailure(
                    reason: .noPublicKey, message: "The public key of \(host)'s certificate cannot be read.")
            }
            guard keyPins.contains(leafHash) else {
                return TrustEvaluationFailure(
                    reason: .pinMismatch, message: "The public key of \(host)'s certificate matches no pin.")
            }
            return nil
        }
    }
#endif
