import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Why a server-trust evaluation refused a pinned host.
struct TrustEvaluationFailure: Sendable, Hashable {
    /// What did not hold.
    enum Reason: Sendable, Hashable {
        /// The chain validated (or needed not), but the leaf's key matched no pin.
        case pinMismatch
        /// The chain did not validate, or could not be set up for evaluation.
        case untrustedChain
        /// The chain has no readable certificate.
        case noCertificate
        /// The leaf's public key could not be read.
        case noPublicKey
    }

    /// What did not hold.
    let reason: Reason
    /// A human-readable explanation, without certificate contents.
    let message: String
    /// The host whose trust was refused, as the ledger recorded it (after a redirect, not the
    /// request's own); `nil` before it is recorded.
    var host: String? = nil

    /// The failure as the seed library's error type, for a request to `host`.
    func trustError(host: String) -> ServerTrustError {
        switch reason {
        case .pinMismatch: .certificatePinningFailed(host: host)
        case .untrustedChain: .trustEvaluationFailed
        case .noCertificate: .noCertificateFound
        case .noPublicKey: .noPublicKeyFound
        }
    }

    /// The transport error a caller sees for it, with the ``ServerTrustError`` as its
    /// underlying error.
    func transportError(url: URL?) -> TransportError {
        TransportError(
            reason == .untrustedChain || reason == .noCertificate ? .tlsFailure : .pinMismatch, url: url,
            message: message, underlyingError: trustError(host: host ?? url?.host ?? ""))
    }
}

extension TrustEvaluationFailure {
    /// What an evaluator's own `evaluate(_:forHost:)` threw, as a failure: a
    /// ``ServerTrustError`` keeps its meaning; any other error is a refusal by the pin policy.
    /// The message names the error's type only (an error's text may quote the certificate).
    init(refusal error: any Error, host: String) {
        switch error as? ServerTrustError {
        case .certificatePinningFailed?:
            self.init(reason: .pinMismatch, message: "The public key of \(host)'s certificate matches no pin.")
        case .trustEvaluationFailed?:
            self.init(reason: .untrustedChain, message: "The certificate chain of \(host) is not trusted.")
        case .noCertificateFound?:
            self.init(reason: .noCertificate, message: "The certificate chain of \(host) could not be read.")
        case .noPublicKeyFound?:
            self.init(reason: .noPublicKey, message: "The public key of \(host)'s certificate cannot be read.")
        case nil:
            self.init(
                reason: .pinMismatch,
                message: "The server trust evaluator for \(host) refused its certificate (\(type(of: error))).")
        }
    }
}

/// Remembers the server-trust evaluations that refused a pinned host, so that the request that
/// failed can report why.
///
/// A refused challenge (`.cancelAuthenticationChallenge`) reaches the caller of a `URLSession`
/// task as `URLError.cancelled`, which ``URLSessionTransport`` turns into `CancellationError`:
/// a pin mismatch would look like a cancellation. The session-level challenge names a host but
/// no task (one TLS connection may serve several tasks), so failures are kept per host with a
/// sequence number, and a request claims a failure recorded for its host while it was in flight
/// (or, after a redirect, for any pinned host while it was in flight). Only the latest failure
/// per pinned host is kept, so the ledger stays as small as the pin list.
///
/// Platform-independent bookkeeping; the Security delegate that records failures is in
/// `PinningTransport+Security.swift`.
final class TrustFailureLedger: Sendable {
    private struct Entry {
        var sequence: UInt64
        var failure: TrustEvaluationFailure
    }

    private struct State {
        var sequence: UInt64 = 0
        var latest: [String: Entry] = [:]
    }

    private let state = Locked(State())

    /// A mark to pass to ``failure(host:since:)``: failures recorded after it are newer.
    func mark() -> UInt64 {
        state.withLock { $0.sequence }
    }

    /// Records that the trust of `host` was refused for `failure`.
    func record(_ failure: TrustEvaluationFailure, host: String) {
        state.withLock { state in
            state.sequence &+= 1
            var failure = failure
            failure.host = host
            state.latest[host.lowercased()] = Entry(sequence: state.sequence, failure: failure)
        }
    }

    /// The failure recorded for `host` after `mark`; else, with `anyHost`, the newest one
    /// recorded for any host after `mark` (a redirect to another pinned host); else `nil`.
    func failure(host: String?, since mark: UInt64, anyHost: Bool = true) -> TrustEvaluationFailure? {
        state.withLock { state -> TrustEvaluationFailure? in
            if let host, let entry = state.latest[host.lowercased()], entry.sequence > mark { return entry.failure }
            guard anyHost else { return nil }
            return state.latest.values.filter { $0.sequence > mark }.max { $0.sequence < $1.sequence }?.failure
        }
    }

    /// The error a caller sees: a cancellation or transport error that a refused trust
    /// evaluation caused becomes ``TransportError`` (``TransportError/Code/pinMismatch`` or
    /// ``TransportError/Code/tlsFailure``); a cancellation by the caller, and any other error,
    /// stay as they are.
    static func mapped(
        _ error: any Error, recorded: TrustEvaluationFailure?, url: URL?, callerCancelled: Bool
    ) -> any Error {
        guard let recorded, !callerCancelled else { return error }
        if error is CancellationError {
            return recorded.transportError(url: url)
        }
        // Only what a refused handshake can end in: a timeout, a size limit or a bad response of
        // a request whose host failed another connection's pin meanwhile stays what it is.
        if let error = error as? TransportError, error.code == .tlsFailure || error.code == .connectionLost {
            return recorded.transportError(url: url)
        }
        if let urlError = error as? URLError, urlError.code == .cancelled {
            return recorded.transportError(url: url)
        }
        return error
    }
}

/// Sends through `inner` (a URLSession transport whose delegate records into `ledger`) and
/// reports a refused trust evaluation as ``TransportError`` rather than `CancellationError`.
struct TrustFailureReportingTransport: HTTPTransportProtocol {
    let inner: any HTTPTransportProtocol
    let ledger: TrustFailureLedger

    func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        try await reporting(request) { try await inner.data(for: $0) }
    }

    func stream(for request: URLRequest) async throws -> (HTTPByteStream, HTTPURLResponse) {
        try await reporting(request) { try await inner.stream(for: $0) }
    }

    private func reporting<Result>(
        _ request: URLRequest, _ operation: (URLRequest) async throws -> Result
    ) async throws -> Result {
        let mark = ledger.mark()
        do {
            return try await operation(request)
        } catch {
            // A refused challenge always ends the task as a cancellation. Only then may another
            // host's failure be this request's (it was redirected there): a timeout or a refused
            // connection to an unpinned host, while another request failed its pin, stays what
            // it is.
            let cancelled = error is CancellationError || (error as? URLError)?.code == .cancelled
            let recorded = ledger.failure(host: request.url?.host, since: mark, anyHost: cancelled)
            throw TrustFailureLedger.mapped(
                error, recorded: recorded, url: request.url, callerCancelled: Task.isCancelled)
        }
    }
}
