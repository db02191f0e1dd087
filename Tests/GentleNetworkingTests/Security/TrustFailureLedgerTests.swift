import Foundation
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the Apple session delegate does on a refused challenge, simulated: record the failure
/// for the host, then fail the task the way `URLSessionTransport` reports `URLError.cancelled`.
private struct RefusingTransport: HTTPTransportProtocol {
    let ledger: TrustFailureLedger
    let host: String
    let reason: TrustEvaluationFailure.Reason?
    var thrown: any Error = CancellationError()

    func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        if let reason { ledger.record(TrustEvaluationFailure(reason: reason, message: "refused \(host)"), host: host) }
        throw thrown
    }
}

@Suite("A refused trust evaluation is reported as a TransportError, not a cancellation")
struct TrustFailureLedgerTests {
    let url = URL(string: "https://pinned.example.com/x")!

    private func code(
        _ transport: TrustFailureReportingTransport, _ request: URLRequest
    ) async -> TransportError.Code? {
        do {
            _ = try await transport.data(for: request)
            return nil
        } catch let error as TransportError {
            return error.code
        } catch {
            return nil
        }
    }

    @Test("A pin mismatch is .pinMismatch and an untrusted chain .tlsFailure, with the URL")
    func mapsRecordedFailures() async throws {
        let ledger = TrustFailureLedger()
        let pin = TrustFailureReportingTransport(
            inner: RefusingTransport(ledger: ledger, host: "PINNED.example.com", reason: .pinMismatch), ledger: ledger)
        #expect(await code(pin, URLRequest(url: url)) == .pinMismatch)
        let chain = TrustFailureReportingTransport(
            inner: RefusingTransport(ledger: ledger, host: "pinned.example.com", reason: .untrustedChain),
            ledger: ledger)
        let error = await #expect(throws: TransportError.self) { try await chain.data(for: URLRequest(url: url)) }
        #expect(error?.code == .tlsFailure)
        #expect(error?.url == url)
        #expect(error?.underlyingError as? ServerTrustError == .trustEvaluationFailed)
        // URLError.cancelled and a transport error that the refusal caused are mapped too.
        let raw = TrustFailureReportingTransport(
            inner: RefusingTransport(
                ledger: ledger, host: "pinned.example.com", reason: .pinMismatch, thrown: URLError(.cancelled)),
            ledger: ledger)
        #expect(await code(raw, URLRequest(url: url)) == .pinMismatch)
    }

    @Test("Without a recorded failure, a cancellation stays a cancellation; other errors pass through")
    func keepsOtherErrors() async throws {
        let ledger = TrustFailureLedger()
        let none = TrustFailureReportingTransport(
            inner: RefusingTransport(ledger: ledger, host: "pinned.example.com", reason: nil), ledger: ledger)
        await #expect(throws: CancellationError.self) { try await none.data(for: URLRequest(url: self.url)) }

        struct Custom: Error {}
        let custom = TrustFailureReportingTransport(
            inner: RefusingTransport(
                ledger: ledger, host: "pinned.example.com", reason: .pinMismatch, thrown: Custom()),
            ledger: ledger)
        await #expect(throws: Custom.self) { try await custom.data(for: URLRequest(url: self.url)) }
    }

    @Test("A failure recorded before the request started is not claimed by it")
    func onlyFailuresDuringTheRequest() async throws {
        let ledger = TrustFailureLedger()
        ledger.record(TrustEvaluationFailure(reason: .pinMismatch, message: "old"), host: "pinned.example.com")
        let later = TrustFailureReportingTransport(
            inner: RefusingTransport(ledger: ledger, host: "pinned.example.com", reason: nil), ledger: ledger)
        await #expect(throws: CancellationError.self) { try await later.data(for: URLRequest(url: self.url)) }
    }

    @Test("The request's own host wins; after a redirect, a failure for another pinned host is claimed")
    func hostAttribution() {
        let ledger = TrustFailureLedger()
        let mark = ledger.mark()
        ledger.record(TrustEvaluationFailure(reason: .untrustedChain, message: "a"), host: "a.example.com")
        ledger.record(TrustEvaluationFailure(reason: .pinMismatch, message: "b"), host: "b.example.com")
        #expect(ledger.failure(host: "A.example.com", since: mark)?.message == "a")
        #expect(ledger.failure(host: "redirected.example.com", since: mark)?.message == "b")
        #expect(ledger.failure(host: "a.example.com", since: ledger.mark()) == nil)
    }

    @Test("Another host's pin failure, recorded meanwhile, does not turn this request's timeout into .pinMismatch")
    func otherHostsFailureNotClaimedByATimeout() async {
        let ledger = TrustFailureLedger()
        // Another request fails its pin while this one, to an unpinned CDN, times out.
        let timedOut = TrustFailureReportingTransport(
            inner: RefusingTransport(
                ledger: ledger, host: "pinned.example.com", reason: .pinMismatch,
                thrown: TransportError(.timedOut, url: nil, message: "timed out")),
            ledger: ledger)
        #expect(await code(timedOut, URLRequest(url: URL(string: "https://cdn.example.net/x")!)) == .timedOut)
        // A cancellation (how a refused challenge ends a task) after a redirect still is.
        let redirected = TrustFailureReportingTransport(
            inner: RefusingTransport(ledger: ledger, host: "pinned.example.com", reason: .pinMismatch),
            ledger: ledger)
        #expect(await code(redirected, URLRequest(url: URL(string: "https://start.example.net/x")!)) == .pinMismatch)
    }

    @Test("A timeout or a limit of a request whose own host failed another connection's pin stays what it is")
    func ownHostFailureNotClaimedByAnotherError() async {
        let ledger = TrustFailureLedger()
        // Another request's new connection to the same host fails its pin while this one times
        // out on its own: before, any TransportError of this request became .pinMismatch.
        for thrown in [
            TransportError(.timedOut, url: nil, message: "timed out"),
            TransportError(.responseTooLarge, url: nil, message: "too large"),
        ] {
            let transport = TrustFailureReportingTransport(
                inner: RefusingTransport(
                    ledger: ledger, host: "pinned.example.com", reason: .pinMismatch, thrown: thrown),
                ledger: ledger)
            #expect(await code(transport, URLRequest(url: url)) == thrown.code)
        }
        // A TLS failure or a dropped connection, which a refusal can end in, is the pin's.
        let dropped = TrustFailureReportingTransport(
            inner: RefusingTransport(
                ledger: ledger, host: "pinned.example.com", reason: .pinMismatch,
                thrown: TransportError(.connectionLost, url: nil, message: "lost")),
            ledger: ledger)
        #expect(await code(dropped, URLRequest(url: url)) == .pinMismatch)
    }

    @Test("After a redirect, the pin error names the host that failed, not the request's first")
    func redirectedHostNamed() async throws {
        let ledger = TrustFailureLedger()
        let transport = TrustFailureReportingTransport(
            inner: RefusingTransport(ledger: ledger, host: "api.pinned.example", reason: .pinMismatch), ledger: ledger)
        let error = await #expect(throws: TransportError.self) {
            try await transport.data(for: URLRequest(url: URL(string: "https://start.example.net/x")!))
        }
        #expect(error?.underlyingError as? ServerTrustError == .certificatePinningFailed(host: "api.pinned.example"))
    }

    @Test("A caller's own cancellation is never turned into a TLS error")
    func callerCancellation() {
        let failure = TrustEvaluationFailure(reason: .pinMismatch, message: "m")
        let kept = TrustFailureLedger.mapped(CancellationError(), recorded: failure, url: url, callerCancelled: true)
        #expect(kept is CancellationError)
        let mapped = TrustFailureLedger.mapped(CancellationError(), recorded: failure, url: url, callerCancelled: false)
        #expect((mapped as? TransportError)?.code == .pinMismatch)
    }

    @Test("Each refusal carries the seed's ServerTrustError as the transport error's underlying error")
    func serverTrustErrors() {
        let cases: [(TrustEvaluationFailure.Reason, TransportError.Code, ServerTrustError)] = [
            (.pinMismatch, .pinMismatch, .certificatePinningFailed(host: url.host ?? "")),
            (.untrustedChain, .tlsFailure, .trustEvaluationFailed),
            (.noCertificate, .tlsFailure, .noCertificateFound),
            (.noPublicKey, .pinMismatch, .noPublicKeyFound),
        ]
        for (reason, code, trustError) in cases {
            let error = TrustEvaluationFailure(reason: reason, message: "m").transportError(url: url)
            #expect(error.code == code)
            #expect(error.underlyingError as? ServerTrustError == trustError)
        }
    }

    @Test(
        "What a custom evaluator throws (the seed's SecTrust shape) keeps its meaning; other errors are a pin refusal")
    func customEvaluatorRefusals() {
        struct PolicyError: Error, CustomStringConvertible {
            var description: String { "MIIB secret certificate text" }
        }
        let host = url.host ?? ""
        let cases: [(any Error, TrustEvaluationFailure.Reason, TransportError.Code, ServerTrustError)] = [
            (
                ServerTrustError.certificatePinningFailed(host: host), .pinMismatch, .pinMismatch,
                .certificatePinningFailed(host: host)
            ),
            (ServerTrustError.trustEvaluationFailed, .untrustedChain, .tlsFailure, .trustEvaluationFailed),
            (ServerTrustError.noCertificateFound, .noCertificate, .tlsFailure, .noCertificateFound),
            (ServerTrustError.noPublicKeyFound, .noPublicKey, .pinMismatch, .noPublicKeyFound),
            (PolicyError(), .pinMismatch, .pinMismatch, .certificatePinningFailed(host: host)),
        ]
        for (thrown, reason, code, trustError) in cases {
            let failure = TrustEvaluationFailure(refusal: thrown, host: host)
            #expect(failure.reason == reason, "\(thrown)")
            let error = failure.transportError(url: url)
            #expect(error.code == code)
            #expect(error.underlyingError as? ServerTrustError == trustError)
            #expect(failure.message.contains(host))
            #expect(!failure.message.contains("MIIB"), "an error's text never reaches the message")
        }
    }
}
