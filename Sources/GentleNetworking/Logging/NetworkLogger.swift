import Foundation

/// Receives a record of each request the service sends and each response or failure.
///
/// Records are already redacted: `Authorization`, cookies, API keys and fields named like
/// tokens or passwords never reach a logger. Inject one into ``HTTPNetworkService``; the default,
/// ``NoOpNetworkLogger``, drops everything. The library never prints.
public protocol NetworkLogger: Sendable {
    /// Whether records are wanted at all; `true` by default. When `false`, the service skips
    /// building (and redacting) them, so a disabled logger costs nothing per request.
    var isEnabled: Bool { get }
    /// Handles one record. Called on the task that sends the request; keep it fast.
    func log(_ record: NetworkLogRecord)
}

extension NetworkLogger {
    /// `true`: records are built and passed to ``log(_:)``.
    public var isEnabled: Bool { true }
}

/// A logger that discards every record: the default.
public struct NoOpNetworkLogger: NetworkLogger {
    /// Creates the no-op logger.
    public init() {}
    /// `false`: the service does not even build records for it.
    public var isEnabled: Bool { false }
    /// Does nothing.
    public func log(_ record: NetworkLogRecord) {}
}

/// A logger that hands every record to a closure, such as one forwarding to `os.Logger` or
/// swift-log.
public struct ClosureNetworkLogger: NetworkLogger {
    private let handler: @Sendable (NetworkLogRecord) -> Void

    /// Creates a logger that calls `handler` for each record.
    public init(_ handler: @escaping @Sendable (NetworkLogRecord) -> Void) {
        self.handler = handler
    }

    /// Passes `record` to the closure.
    public func log(_ record: NetworkLogRecord) {
        handler(record)
    }
}

/// One redacted log entry: a request about to be sent, a step on its way (a redirect, a retry, a
/// credential refresh, a cache revalidation), a response received, or a failure.
///
/// For one logical request an observer sees, in order: its ``Event/request`` record, one record
/// for each step as it happens (``step`` says which), then its ``Event/response`` or
/// ``Event/failure`` record, which carries the request's ``metrics``. Every record of the request
/// has the same ``requestID``.
public struct NetworkLogRecord: Sendable, CustomStringConvertible {
    /// What happened.
    public enum Event: String, Sendable {
        /// A request is about to be sent.
        case request
        /// A response arrived (any status).
        case response
        /// The request failed without a response, or the response could not be used.
        case failure
        /// A redirect was followed (``NetworkLogRecord/step`` is ``ExchangeStep/redirected(statusCode:to:credentialsStripped:)``).
        case redirect
        /// A retry was decided (``ExchangeStep/retrying(attempt:delay:reason:)``).
        case retry
        /// The credential is being refreshed or was refreshed (``ExchangeStep/refreshStarted``,
        /// ``ExchangeStep/refreshJoined``, ``ExchangeStep/refreshFinished``,
        /// ``ExchangeStep/refreshFailed(reason:)``, ``ExchangeStep/reauthorized``).
        case refresh
        /// The ETag cache revalidated an entry or served one (``ExchangeStep/revalidating``,
        /// ``ExchangeStep/servedFromCache``).
        case cache
    }

    /// What happened.
    public let event: Event
    /// The request method, such as `GET`.
    public let method: String
    /// The URL, with sensitive query values and user info redacted.
    public let url: String
    /// The response status, for ``Event/response``.
    public let statusCode: Int?
    /// Request headers (for ``Event/request``) or response headers, with credentials redacted.
    public let headers: [String: String]
    /// The start of the body (at most 1 KiB), with credentials redacted; `nil` when there is none.
    public let bodyExcerpt: String?
    /// The time from sending to this record, for ``Event/response`` and ``Event/failure``.
    public let duration: TimeInterval?
    /// The failure, for ``Event/failure``.
    public let errorDescription: String?
    /// The same number on every record of one logical request (its request record, then its
    /// response or failure), unique in the process; `0` for a record made by hand.
    public let requestID: UInt64
    /// When the record was made.
    public let timestamp: Date
    /// What happened, for the step events (``Event/redirect``, ``Event/retry``,
    /// ``Event/refresh``, ``Event/cache``); `nil` for the others.
    public let step: ExchangeStep?
    /// The request's timings, sizes and steps, for ``Event/response`` and ``Event/failure``
    /// records of the service; `nil` otherwise.
    public let metrics: RequestMetrics?

    /// Creates a record. The values are stored as given: redact them before.
    public init(
        event: Event, method: String, url: String, statusCode: Int? = nil, headers: [String: String] = [:],
        bodyExcerpt: String? = nil, duration: TimeInterval? = nil, errorDescription: String? = nil,
        requestID: UInt64 = 0, timestamp: Date = Date(), step: ExchangeStep? = nil, metrics: RequestMetrics? = nil
    ) {
        self.event = event
        self.method = method
        self.url = url
        self.statusCode = statusCode
        self.headers = headers
        self.bodyExcerpt = bodyExcerpt
        self.duration = duration
        self.errorDescription = errorDescription
        self.requestID = requestID
        self.timestamp = timestamp
        self.step = step
        self.metrics = metrics
    }

    /// This record with `requestID` and `metrics`.
    func numbered(_ requestID: UInt64, metrics: RequestMetrics? = nil) -> NetworkLogRecord {
        NetworkLogRecord(
            event: event, method: method, url: url, statusCode: statusCode, headers: headers,
            bodyExcerpt: bodyExcerpt, duration: duration, errorDescription: errorDescription, requestID: requestID,
            timestamp: timestamp, step: step, metrics: metrics ?? self.metrics)
    }

    /// One line, such as `← 200 GET https://api/x (12.3 ms)`.
    public var description: String {
        let timing = duration.map { String(format: " (%.1f ms)", $0 * 1000) } ?? ""
        switch event {
        case .request:
            return "→ \(method) \(url)"
        case .response:
            return "← \(statusCode ?? 0) \(method) \(url)\(timing)"
        case .failure:
            return "✗ \(method) \(url)\(timing): \(errorDescription ?? "unknown error")"
        case .redirect, .retry, .refresh, .cache:
            return "· \(method) \(url): \(step.map(String.init(describing:)) ?? event.rawValue)"
        }
    }
}

extension NetworkLogRecord {
    // `secrets` are the request's credential values (``Redactor/credentialValues(of:alsoHeaders:)``):
    // whatever a record quotes is scrubbed of them, wherever the server echoed them.

    static func request(_ request: URLRequest, secrets: [String] = []) -> NetworkLogRecord {
        NetworkLogRecord(
            event: .request,
            method: request.httpMethod ?? "GET",
            url: Redactor.scrub(Redactor.url(request.url), secrets: secrets),
            headers: Redactor.headers(request.allHTTPHeaderFields ?? [:], scrubbing: secrets),
            bodyExcerpt: request.httpBody.map { Redactor.bodyExcerpt($0, limit: 1024, scrubbing: secrets) }
        )
    }

    static func response(
        _ response: HTTPURLResponse, body: Data, request: URLRequest, duration: TimeInterval, secrets: [String] = []
    ) -> NetworkLogRecord {
        NetworkLogRecord(
            event: .response,
            method: request.httpMethod ?? "GET",
            url: Redactor.scrub(Redactor.url(response.url ?? request.url), secrets: secrets),
            statusCode: response.statusCode,
            headers: Redactor.headers(HTTPErrorResponse(response, body: Data()).headers, scrubbing: secrets),
            bodyExcerpt: Redactor.bodyExcerpt(body, limit: 1024, scrubbing: secrets),
            duration: duration
        )
    }

    static func step(_ step: ExchangeStep, request: URLRequest, secrets: [String] = []) -> NetworkLogRecord {
        NetworkLogRecord(
            event: step.event,
            method: request.httpMethod ?? "GET",
            url: Redactor.scrub(Redactor.url(request.url), secrets: secrets),
            step: step
        )
    }

    static func failure(
        _ error: any Error, request: URLRequest, duration: TimeInterval, secrets: [String] = []
    ) -> NetworkLogRecord {
        NetworkLogRecord(
            event: .failure,
            method: request.httpMethod ?? "GET",
            url: Redactor.scrub(Redactor.url(request.url), secrets: secrets),
            duration: duration,
            errorDescription: Redactor.scrub(String(describing: error), secrets: secrets)
        )
    }
}
