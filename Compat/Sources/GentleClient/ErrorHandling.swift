// Pending: needs NetworkError as an enum (`if case .httpStatusError(let s) = error`, an exhaustive
// switch over `.invalidResponseType` and `.httpStatusError`), ServerTrustError, and the nested
// error types of the canned transports and MatchingTransport.
import Foundation
import GentleNetworking

/// The app's message for a service error.
public func message(for error: NetworkError) -> String {
    switch error {
    case .invalidResponseType:
        return "not HTTP"
    case .httpStatusError(let status):
        return "HTTP \(status.statusCode)"
    }
}

/// Whether an error means "log in again".
public func needsLogin(_ error: Error) -> Bool {
    if let error = error as? NetworkError, case .httpStatusError(let status) = error {
        return status == .unauthorized
    }
    return false
}

/// The app's message for a pinning failure.
public func pinningMessage(_ error: ServerTrustError) -> String {
    switch error {
    case .trustEvaluationFailed, .noCertificateFound, .noPublicKeyFound:
        return "untrusted"
    case .certificatePinningFailed(let host):
        return "pin failed for \(host)"
    }
}

/// The test double errors, as the app's tests classify them.
public func isStubMiss(_ error: Error) -> Bool {
    switch error {
    case CannedRoutesTransport.Error.noMatch, CannedRoutesTransport.Error.missingRequestURL:
        return true
    case CannedRoutesTransport.Error.ambiguousMatch(let count):
        return count > 1
    case CannedResponseTransport.Error.missingRequestURL, CannedResponse.Error.failedToCreateHTTPURLResponse:
        return true
    case MatchingTransport.MatchingTransportError.notMatched:
        return true
    default:
        return false
    }
}
