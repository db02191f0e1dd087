import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The log records of one logical request: the request, its steps, then its response or failure,
/// all with the same ``NetworkLogRecord/requestID``. `nil` when the logger is disabled, so a
/// disabled logger costs one check per request.
///
/// The records share the session: it holds the request as sent and, worked out once, the first
/// time a record of the request is read, the request's credential values and its redacted URL.
/// Nothing is redacted while the request runs, so an enabled logger that never reads a record's
/// fields costs the request a few allocations, not the redaction of its URL, headers and body.
final class NetworkLogSession: Sendable {
    private let logger: any NetworkLogger
    /// The request as the service sent it: credentials included, never exposed as is.
    let request: URLRequest
    /// Headers whose values are secrets besides the usual ones (the auth service's own header).
    private let alsoHeaders: [String]
    private let requestID: UInt64
    private let start = DispatchTime.now().uptimeNanoseconds
    private let cache = Locked(Cache())

    private struct Cache {
        var secrets: [String]?
        var url: String?
    }

    private static let lastRequestID = Locked<UInt64>(0)

    /// Logs the request record, when `logger` wants records.
    ///
    /// - Parameter alsoHeaders: Headers whose values are secrets besides the usual ones (the auth
    ///   service's own header), scrubbed from everything the records quote.
    init?(logger: any NetworkLogger, request: URLRequest, alsoHeaders: [String]) {
        guard logger.isEnabled else { return nil }
        self.logger = logger
        self.request = request
        self.alsoHeaders = alsoHeaders
        self.requestID = Self.lastRequestID.withLock { id in
            id &+= 1
            return id
        }
        logger.log(NetworkLogRecord(event: .request, requestID: requestID, content: LogRecordContent(.request(self))))
    }

    /// The time since the request record.
    var elapsed: TimeInterval {
        TimeInterval(DispatchTime.now().uptimeNanoseconds &- start) / 1_000_000_000
    }

    /// Logs the response, with `body` (what of it was read) and the request's metrics. The
    /// `HTTPURLResponse` is built only if the logger reads the record's headers.
    func response(_ response: DeferredResponse, body: Data, metrics: RequestMetrics? = nil) {
        logger.log(
            NetworkLogRecord(
                event: .response, statusCode: response.statusCode, duration: elapsed, requestID: requestID,
                content: .response(self, response, body: body, metrics: metrics)))
    }

    /// Logs the response, with `body` (what of it was read) and the request's metrics.
    func response(_ response: HTTPURLResponse, body: Data, metrics: RequestMetrics? = nil) {
        self.response(DeferredResponse(response), body: body, metrics: metrics)
    }

    /// Logs the failure, with the request's metrics.
    func failure(_ error: any Error, metrics: RequestMetrics? = nil) {
        logger.log(
            NetworkLogRecord(
                event: .failure, duration: elapsed, requestID: requestID,
                content: LogRecordContent(.failure(self, error, metrics: metrics))))
    }

    /// Logs a step of the request (a redirect, a retry, a refresh, a cache revalidation).
    func step(_ step: ExchangeStep) {
        logger.log(
            NetworkLogRecord(event: step.event, requestID: requestID, content: LogRecordContent(.step(self, step))))
    }

    // MARK: What the records read

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

    /// `text` with the request's credential values replaced.
    func scrub(_ text: String) -> String {
        Redactor.scrub(text, secrets: secrets)
    }
}
