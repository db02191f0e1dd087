import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The fields of a ``NetworkLogRecord`` that cost something to redact (its URL, headers, body
/// excerpt, error text, step and metrics), worked out from what the service saw the first time
/// each is read, then kept.
///
/// A record made by the service holds the raw material (the request's ``NetworkLogSession``, the
/// response head, at most ``Redactor/maxScannedBodyBytes`` of the body, the error) privately: nothing unredacted is reachable through the record's API, its
/// description or its mirror. A logger that only counts records, or reads their status, costs a
/// request two small allocations per record.
final class LogRecordContent: Sendable {
    enum Source: Sendable {
        /// Values given to the public initializer, stored as they are.
        case literal(
            method: String, url: String, headers: [String: String], bodyExcerpt: String?, errorDescription: String?,
            step: ExchangeStep?, metrics: RequestMetrics?)
        case request(NetworkLogSession)
        /// The response head, the start of the body and the body's size.
        case response(NetworkLogSession, DeferredResponse, body: Data, bodySize: Int, metrics: RequestMetrics?)
        case step(NetworkLogSession, ExchangeStep)
        case failure(NetworkLogSession, any Error, metrics: RequestMetrics?)
    }

    private let source: Source
    private let cache = Locked(Cache())

    private struct Cache {
        var url: String?
        var headers: [String: String]?
        var bodyExcerpt: String??
        var errorDescription: String??
        var metrics: RequestMetrics??
    }

    init(_ source: Source) {
        self.source = source
    }

    /// The response's content for a record: at most ``Redactor/maxScannedBodyBytes`` of `body`
    /// are kept (copied when the body is larger, so the record never holds a large body alive).
    static func response(
        _ session: NetworkLogSession, _ response: DeferredResponse, body: Data, metrics: RequestMetrics?
    ) -> LogRecordContent {
        let kept = body.count <= Redactor.maxScannedBodyBytes ? body : Data(body.prefix(Redactor.maxScannedBodyBytes))
        return LogRecordContent(.response(session, response, body: kept, bodySize: body.count, metrics: metrics))
    }

    var method: String {
        switch source {
        case .literal(let method, _, _, _, _, _, _): method
        case .request(let session), .response(let session, _, _, _, _), .step(let session, _),
            .failure(let session, _, _):
            session.method
        }
    }

    var url: String {
        switch source {
        case .literal(_, let url, _, _, _, _, _): return url
        case .request(let session), .step(let session, _), .failure(let session, _, _): return session.url
        case .response(let session, let response, _, _, _):
            guard let responseURL = response.url, responseURL != session.request.url else { return session.url }
            return cached(\.url) { session.scrub(Redactor.url(responseURL)) }
        }
    }

    var headers: [String: String] {
        switch source {
        case .literal(_, _, let headers, _, _, _, _): return headers
        case .step, .failure: return [:]
        case .request(let session):
            return cached(\.headers) {
                Redactor.headers(session.request.allHTTPHeaderFields ?? [:], scrubbing: session.secrets)
            }
        case .response(let session, let response, _, _, _):
            return cached(\.headers) {
                guard let response = try? response.response() else { return [:] }
                return Redactor.headers(HTTPErrorResponse(response, body: Data()).headers, scrubbing: session.secrets)
            }
        }
    }

    var bodyExcerpt: String? {
        switch source {
        case .literal(_, _, _, let excerpt, _, _, _): return excerpt
        case .step, .failure: return nil
        case .request(let session):
            guard let body = session.request.httpBody else { return nil }
            return cached(\.bodyExcerpt) {
                Redactor.bodyExcerpt(body, limit: 1024, scrubbing: session.secrets)
            }
        case .response(let session, _, let body, let size, _):
            return cached(\.bodyExcerpt) {
                Redactor.bodyExcerpt(body, totalSize: size, limit: 1024, scrubbing: session.secrets)
            }
        }
    }

    var errorDescription: String? {
        switch source {
        case .literal(_, _, _, _, let description, _, _): return description
        case .request, .response, .step: return nil
        case .failure(let session, let error, _):
            return cached(\.errorDescription) { session.scrub(String(describing: error)) }
        }
    }

    /// The step, with a redirect's target scrubbed of the request's credential values.
    var step: ExchangeStep? {
        switch source {
        case .literal(_, _, _, _, _, let step, _): return step
        case .request, .response, .failure: return nil
        case .step(let session, let step): return Redactor.scrub(step, secrets: session.secrets)
        }
    }

    /// The metrics, with every URL in them scrubbed of the request's credential values.
    var metrics: RequestMetrics? {
        switch source {
        case .literal(_, _, _, _, _, _, let metrics): return metrics
        case .request, .step: return nil
        case .response(let session, _, _, _, let metrics), .failure(let session, _, let metrics):
            guard let metrics else { return nil }
            return cached(\.metrics) { Redactor.scrub(metrics, secrets: session.secrets) }
        }
    }

    /// The cached value at `field`, computed outside the lock the first time.
    private func cached<Value>(_ field: WritableKeyPath<Cache, Value?>, _ compute: () -> Value) -> Value {
        if let value = cache.withLock({ $0[keyPath: field] }) { return value }
        let value = compute()
        cache.withLock { $0[keyPath: field] = value }
        return value
    }
}
