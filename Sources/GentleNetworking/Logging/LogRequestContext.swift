import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the log records of one request share: the request as sent (with at most
/// ``Redactor/maxScannedBodyBytes`` of its body) and, worked out once, the first time a record is
/// read, the request's credential values and its redacted URL.
///
/// It holds no logger: a logger that keeps records keeps these, and nothing here keeps the logger,
/// so no cycle forms.
final class LogRequestContext: Sendable {
    /// The request as the service sent it, credentials included (never exposed as is); a body
    /// larger than ``Redactor/maxScannedBodyBytes`` is replaced by its start.
    let request: URLRequest
    /// The size of the request's body, when it has one.
    let bodySize: Int?
    /// Headers whose values are secrets besides the usual ones (the auth service's own header).
    private let alsoHeaders: [String]
    private let cache = Locked(Cache())

    private struct Cache {
        var secrets: [String]?
        var url: String?
    }

    init(request: URLRequest, alsoHeaders: [String]) {
        if let body = request.httpBody, body.count > Redactor.maxScannedBodyBytes {
            // A large upload is not kept alive by the records of a logger that stores them.
            var kept = request
            kept.httpBody = Redactor.excerptSource(of: body)
            self.request = kept
            self.bodySize = body.count
        } else {
            self.request = request
            self.bodySize = request.httpBody?.count
        }
        self.alsoHeaders = alsoHeaders
    }

    /// The request method, such as `GET`.
    var method: String { request.httpMethod ?? "GET" }

    /// The request's credential values (``Redactor/credentialValues(of:alsoHeaders:)``), longest
    /// first: scrubbed from whatever a record of the request quotes.
    var secrets: [String] {
        if let secrets = cache.withLock({ $0.secrets }) { return secrets }
        let secrets = Redactor.credentialValues(of: request, alsoHeaders: alsoHeaders)
        cache.withLock { $0.secrets = secrets }
        return secrets
    }

    /// The request's URL, redacted (``Redactor/url(_:)``) and scrubbed of its credential values.
    var url: String {
        if let url = cache.withLock({ $0.url }) { return url }
        let url = scrub(Redactor.url(request.url))
        cache.withLock { $0.url = url }
        return url
    }

    /// Runs `body` under the context's lock, which also guards what the request's records cache
    /// (one lock per request rather than one per record). `body` must not call back into the
    /// context.
    func locked<Result>(_ body: () -> Result) -> Result {
        cache.withLock { _ in body() }
    }

    /// `text` with the request's credential values replaced.
    func scrub(_ text: String) -> String {
        Redactor.scrub(text, secrets: secrets)
    }
}
