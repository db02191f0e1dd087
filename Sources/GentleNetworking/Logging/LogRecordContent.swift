import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The fields of a ``NetworkLogRecord`` that cost something to redact (its URL, headers, body
/// excerpt, error text, step and metrics), worked out from what the service saw the first time
/// each is read, then kept.
///
/// A record made by the service holds the raw material privately: the request's shared
/// ``LogRequestContext`` (the request, with at most ``Redactor/maxScannedBodyBytes`` of its body),
/// the response head and at most as much of the response body; a failure's description is
/// redacted when the record is made. Nothing unredacted is reachable through the record's API, its
/// description or its mirror. A logger that only counts records, or reads their status, costs a
/// request three small allocations per record (this object, its lock's box and the mutex).
final class LogRecordContent: Sendable {
    enum Source: Sendable {
        /// Values given to the public initializer, stored as they are.
        case literal(
            method: String, url: String, headers: [String: String], bodyExcerpt: String?, errorDescription: String?,
            step: ExchangeStep?, metrics: RequestMetrics?)
        case request(LogRequestContext)
        /// The response head, the start of the body and the body's size.
        case response(LogRequestContext, DeferredResponse, body: Data, bodySize: Int, metrics: RequestMetrics?)
        case step(LogRequestContext, ExchangeStep)
        /// The failure's description, already redacted.
        case failure(LogRequestContext, description: String, metrics: RequestMetrics?)
    }

    private let source: Source
    private let cache = Locked(Cache())

    private struct Cache {
        var url: String?
        var headers: [String: String]?
        var bodyExcerpt: String??
        var metrics: RequestMetrics??
        var step: ExchangeStep??
    }

    init(_ source: Source) {
        self.source = source
    }

    /// The response's content for a record, keeping of `body` only ``Redactor/excerptSource(of:)``.
    static func response(
        _ context: LogRequestContext, _ response: DeferredResponse, body: Data, metrics: RequestMetrics?
    ) -> LogRecordContent {
        LogRecordContent(
            .response(
                context, response, body: Redactor.excerptSource(of: body), bodySize: body.count, metrics: metrics))
    }

    var method: String {
        switch source {
        case .literal(let method, _, _, _, _, _, _): method
        case .request(let context), .response(let context, _, _, _, _), .step(let context, _),
            .failure(let context, _, _):
            context.method
        }
    }

    var url: String {
        switch source {
        case .literal(_, let url, _, _, _, _, _): return url
        case .request(let context), .step(let context, _), .failure(let context, _, _): return context.url
        case .response(let context, let response, _, _, _):
            guard let responseURL = response.url, responseURL != context.request.url else { return context.url }
            return cached(\.url) { context.scrub(Redactor.url(responseURL)) }
        }
    }

    var headers: [String: String] {
        switch source {
        case .literal(_, _, let headers, _, _, _, _): return headers
        case .step, .failure: return [:]
        case .request(let context):
            return cached(\.headers) {
                Redactor.headers(context.request.allHTTPHeaderFields ?? [:], scrubbing: context.secrets)
            }
        case .response(let context, let response, _, _, _):
            return cached(\.headers) {
                guard let response = try? response.response() else { return [:] }
                return Redactor.headers(HTTPErrorResponse(response, body: Data()).headers, scrubbing: context.secrets)
            }
        }
    }

    var bodyExcerpt: String? {
        switch source {
        case .literal(_, _, _, let excerpt, _, _, _): return excerpt
        case .step, .failure: return nil
        case .request(let context):
            guard let body = context.request.httpBody else { return nil }
            return cached(\.bodyExcerpt) {
                Redactor.bodyExcerpt(body, totalSize: context.bodySize, limit: 1024, scrubbing: context.secrets)
            }
        case .response(let context, _, let body, let size, _):
            return cached(\.bodyExcerpt) {
                Redactor.bodyExcerpt(body, totalSize: size, limit: 1024, scrubbing: context.secrets)
            }
        }
    }

    var errorDescription: String? {
        switch source {
        case .literal(_, _, _, _, let description, _, _): return description
        case .request, .response, .step: return nil
        case .failure(_, let description, _):
            return description
        }
    }

    /// The step, with a redirect's target scrubbed of the request's credential values.
    var step: ExchangeStep? {
        switch source {
        case .literal(_, _, _, _, _, let step, _): return step
        case .request, .response, .failure: return nil
        case .step(let context, let step): return cached(\.step) { Redactor.scrub(step, secrets: context.secrets) }
        }
    }

    /// The metrics, with every URL in them scrubbed of the request's credential values.
    var metrics: RequestMetrics? {
        switch source {
        case .literal(_, _, _, _, _, _, let metrics): return metrics
        case .request, .step: return nil
        case .response(let context, _, _, _, let metrics), .failure(let context, _, let metrics):
            guard let metrics else { return nil }
            return cached(\.metrics) { Redactor.scrub(metrics, secrets: context.secrets) }
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
