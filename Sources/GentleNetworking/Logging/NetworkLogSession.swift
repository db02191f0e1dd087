import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The log records of one logical request: the request, its steps, then its response or failure,
/// all with the same ``NetworkLogRecord/requestID``. `nil` when the logger is disabled, so a
/// disabled logger costs one check per request.
///
/// The records share a ``LogRequestContext`` (the request, and its credential values and
/// redacted URL once worked out). Nothing is redacted while the request runs, so an enabled logger
/// that never reads a record's fields costs the request a few allocations, not the redaction of
/// its URL, headers and body.
///
/// A class, so the service and its ``ExchangeRecorder`` share one reference rather than copying
/// the logger existential (measured: about 2k instructions per logged request as a struct). The
/// records hold the context only, never the session or its logger.
final class NetworkLogSession: Sendable {
    private let logger: any NetworkLogger
    private let context: LogRequestContext
    private let requestID: UInt64
    private let start = DispatchTime.now().uptimeNanoseconds

    private static let lastRequestID = Locked<UInt64>(0)

    /// Logs the request record, when `logger` wants records.
    ///
    /// - Parameter alsoHeaders: Headers whose values are secrets besides the usual ones (the auth
    ///   service's own header), scrubbed from everything the records quote. Not evaluated when
    ///   the logger is disabled.
    init?(logger: any NetworkLogger, request: URLRequest, alsoHeaders: @autoclosure () -> [String]) {
        guard logger.isEnabled else { return nil }
        self.logger = logger
        self.context = LogRequestContext(request: request, alsoHeaders: alsoHeaders())
        self.requestID = Self.lastRequestID.withLock { id in
            id &+= 1
            return id
        }
        logger.log(
            NetworkLogRecord(event: .request, requestID: requestID, content: .request(context)))
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
                content: .response(context, response, body: body, metrics: metrics)))
    }

    /// Logs the response, with `body` (what of it was read) and the request's metrics.
    func response(_ response: HTTPURLResponse, body: Data, metrics: RequestMetrics? = nil) {
        self.response(DeferredResponse(response), body: body, metrics: metrics)
    }

    /// Logs the failure, with the request's metrics. The error's description is redacted now (a
    /// failure is no hot path), so the record does not keep the error and what it holds alive.
    /// It is one printable line, whatever error it describes (`PrintableText`).
    func failure(_ error: any Error, metrics: RequestMetrics? = nil) {
        // URLs in the text lose their secret query values and user info too: a refresh request's
        // `URLError` quotes its URL (`?client_secret=…`), which is no value of this request.
        let description = PrintableText.escaping(context.scrub(Redactor.redactingURLs(in: String(describing: error))))
        logger.log(
            NetworkLogRecord(
                event: .failure, duration: elapsed, requestID: requestID,
                content: .failure(context, description: description, metrics: metrics)))
    }

    /// Adds a credential sent for the request after it was made (see
    /// ``ExchangeRecorder/noteCredential(_:header:)``) to the values its records scrub.
    func addCredential(_ value: String, header: String) {
        context.addCredential(value, header: header)
    }

    /// Logs a step of the request (a redirect, a retry, a refresh, a cache revalidation).
    func step(_ step: ExchangeStep) {
        logger.log(
            NetworkLogRecord(event: step.event, requestID: requestID, content: .step(context, step)))
    }
}
