import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The log records of one logical request: the request, its steps, then its response or failure, all with
/// the same ``NetworkLogRecord/requestID`` and redacted of the request's credentials. `nil` when
/// the logger is disabled, so a disabled logger costs one check per request.
struct NetworkLogSession {
    private let logger: any NetworkLogger
    private let request: URLRequest
    private let secrets: [String]
    private let requestID: UInt64
    private let start = DispatchTime.now().uptimeNanoseconds

    private static let lastRequestID = Locked<UInt64>(0)

    /// Logs the request record, when `logger` wants records.
    init?(logger: any NetworkLogger, request: URLRequest, secrets: @autoclosure () -> [String]) {
        guard logger.isEnabled else { return nil }
        self.logger = logger
        self.request = request
        self.secrets = secrets()
        self.requestID = Self.lastRequestID.withLock { id in
            id &+= 1
            return id
        }
        logger.log(.request(request, secrets: self.secrets).numbered(requestID))
    }

    /// The time since the request record.
    var elapsed: TimeInterval {
        TimeInterval(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000_000
    }

    /// Logs the response, with `body` (what of it was read) and the request's metrics.
    func response(_ response: HTTPURLResponse, body: Data, metrics: RequestMetrics? = nil) {
        logger.log(
            .response(response, body: body, request: request, duration: elapsed, secrets: secrets).numbered(
                requestID, metrics: metrics))
    }

    /// Logs the failure, with the request's metrics.
    func failure(_ error: any Error, metrics: RequestMetrics? = nil) {
        logger.log(
            .failure(error, request: request, duration: elapsed, secrets: secrets).numbered(requestID, metrics: metrics)
        )
    }

    /// Logs a step of the request (a redirect, a retry, a refresh, a cache revalidation).
    func step(_ step: ExchangeStep) {
        logger.log(.step(step, request: request, secrets: secrets).numbered(requestID))
    }

    /// The request's credential values, scrubbed from everything it logs.
    var credentialValues: [String] { secrets }
}
