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
/// request one small allocation per record (this object: its cache is guarded by the request's
/// context's lock). Metrics are cached only when the request has credential values to scrub from
/// them.
final class LogRecordContent: @unchecked Sendable {
    // @unchecked: `cache`, the one mutable property, is read and written only under the lock of
    // the request's context (`LogRequestContext.locked`); a record without a context has nothing
    // to cache.
    /// What a record was made from, besides the request's context and the metrics (kept apart,
    /// so reading them copies no payload).
    enum Source: Sendable {
        /// Values given to the public initializer, stored as they are.
        case literal(
            method: String, url: String, headers: [String: String], bodyExcerpt: String?, errorDescription: String?,
            step: ExchangeStep?)
        case request
        /// The response head, the start of the body and the body's size.
        case response(DeferredResponse, body: Data, bodySize: Int)
        case step(ExchangeStep)
        /// The failure's description, already redacted.
        case failure(description: String)
    }

    private let source: Source
    /// The request's shared context; `nil` for a ``Source/literal(method:url:headers:bodyExcerpt:errorDescription:step:)``
    /// record.
    private let context: LogRequestContext?
    /// The metrics as collected (a literal record's as given).
    private let rawMetrics: RequestMetrics?
    /// What was worked out, guarded by the context's lock.
    private var cache = Cache()

    private struct Cache {
        var url: String?
        var headers: [String: String]?
        var bodyExcerpt: String??
        var metrics: RequestMetrics??
        var step: ExchangeStep??
    }

    private init(_ source: Source, context: LogRequestContext?, metrics: RequestMetrics?) {
        self.source = source
        self.context = context
        self.rawMetrics = metrics
    }

    /// A record's content from values given as they are (the public initializer's).
    static func literal(
        method: String, url: String, headers: [String: String], bodyExcerpt: String?, errorDescription: String?,
        step: ExchangeStep?, metrics: RequestMetrics?
    ) -> LogRecordContent {
        LogRecordContent(
            .literal(
                method: method, url: url, headers: headers, bodyExcerpt: bodyExcerpt,
                errorDescription: errorDescription, step: step),
            context: nil, metrics: metrics)
    }

    /// The request's content for a record.
    static func request(_ context: LogRequestContext) -> LogRecordContent {
        LogRecordContent(.request, context: context, metrics: nil)
    }

    /// The response's content for a record, keeping of `body` only ``Redactor/excerptSource(of:)``.
    static func response(
        _ context: LogRequestContext, _ response: DeferredResponse, body: Data, metrics: RequestMetrics?
    ) -> LogRecordContent {
        LogRecordContent(
            .response(response, body: Redactor.excerptSource(of: body), bodySize: body.count), context: context,
            metrics: metrics)
    }

    /// A step's content for a record.
    static func step(_ context: LogRequestContext, _ step: ExchangeStep) -> LogRecordContent {
        LogRecordContent(.step(step), context: context, metrics: nil)
    }

    /// A failure's content for a record; `description` is redacted already.
    static func failure(
        _ context: LogRequestContext, description: String, metrics: RequestMetrics?
    ) -> LogRecordContent {
        LogRecordContent(.failure(description: description), context: context, metrics: metrics)
    }

    var method: String {
        if case .literal(let method, _, _, _, _, _) = source { return method }
        return context?.method ?? "GET"
    }

    var url: String {
        guard let context else {
            if case .literal(_, let url, _, _, _, _) = source { return url }
            return ""
        }
        guard case .response(let response, _, _) = source, let responseURL = response.url,
            responseURL != context.request.url
        else { return context.url }
        return cached(context, \.url) { context.scrub(Redactor.url(responseURL)) }
    }

    var headers: [String: String] {
        switch source {
        case .literal(_, _, let headers, _, _, _): return headers
        case .step, .failure: return [:]
        case .request:
            guard let context else { return [:] }
            return cached(context, \.headers) {
                Redactor.headers(
                    context.request.allHTTPHeaderFields ?? [:], scrubbing: context.secrets,
                    alsoRedacting: context.alsoHeaders)
            }
        case .response(let response, _, _):
            guard let context else { return [:] }
            return cached(context, \.headers) {
                guard let response = try? response.response() else { return [:] }
                return Redactor.headers(
                    HTTPErrorResponse(response, body: Data()).headers, scrubbing: context.secrets,
                    alsoRedacting: context.alsoHeaders)
            }
        }
    }

    var bodyExcerpt: String? {
        switch source {
        case .literal(_, _, _, let excerpt, _, _): return excerpt
        case .step, .failure: return nil
        case .request:
            guard let context, let body = context.request.httpBody else { return nil }
            return cached(context, \.bodyExcerpt) {
                Redactor.bodyExcerpt(body, totalSize: context.bodySize, limit: 1024, scrubbing: context.secrets)
            }
        case .response(_, let body, let size):
            guard let context else { return nil }
            return cached(context, \.bodyExcerpt) {
                Redactor.bodyExcerpt(body, totalSize: size, limit: 1024, scrubbing: context.secrets)
            }
        }
    }

    /// About how many bytes of text the record keeps alive unredacted, without redacting
    /// anything: its request's URL, header fields and kept body (at most
    /// ``Redactor/maxScannedBodyBytes``) for a request record; its own fields for one made by
    /// hand; 0 for the others (their request's context is counted with the request record).
    var retainedBytes: Int {
        switch source {
        case .literal(let method, let url, let headers, let excerpt, let description, _):
            return method.utf8.count + url.utf8.count + (excerpt?.utf8.count ?? 0) + (description?.utf8.count ?? 0)
                + headers.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
        case .request:
            guard let request = context?.request else { return 0 }
            let fields = (request.allHTTPHeaderFields ?? [:]).reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
            return (request.url?.absoluteString.utf8.count ?? 0) + fields + (request.httpBody?.count ?? 0)
        case .response, .step, .failure:
            return 0
        }
    }

    /// The size of the body the record was made from (the whole of it, not the excerpt); `nil`
    /// when the record has none or was made by hand.
    var bodySize: Int? {
        switch source {
        case .literal, .step, .failure: return nil
        case .request: return context?.request.httpBody == nil ? nil : context?.bodySize
        case .response(_, _, let size): return size
        }
    }

    var errorDescription: String? {
        switch source {
        case .literal(_, _, _, _, let description, _): return description
        case .request, .response, .step: return nil
        case .failure(let description): return description
        }
    }

    /// The step, with a redirect's target scrubbed of the request's credential values.
    var step: ExchangeStep? {
        switch source {
        case .literal(_, _, _, _, _, let step): return step
        case .request, .response, .failure: return nil
        case .step(let step):
            guard let context else { return step }
            return cached(context, \.step) { Redactor.scrub(step, secrets: context.secrets) }
        }
    }

    /// The metrics, with every URL in them scrubbed of the request's credential values (as they
    /// are when the request has none: nothing to scrub, nothing to cache).
    var metrics: RequestMetrics? {
        guard let metrics = rawMetrics else { return nil }
        guard let context else { return metrics }
        let secrets = context.secrets
        if secrets.isEmpty { return metrics }
        return cached(context, \.metrics) { Redactor.scrub(metrics, secrets: secrets) }
    }

    /// The cached value at `field`, computed outside the lock the first time (computing may
    /// take the context's lock itself).
    private func cached<Value>(
        _ context: LogRequestContext, _ field: WritableKeyPath<Cache, Value?>, _ compute: () -> Value
    ) -> Value {
        if let value = context.locked({ cache[keyPath: field] }) { return value }
        let value = compute()
        context.locked { cache[keyPath: field] = value }
        return value
    }
}
