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
///
/// A record the service makes is redacted when it is read, not when it is made: ``url``,
/// ``headers``, ``bodyExcerpt``, ``step`` and ``metrics`` are each worked out the first time they
/// are read, then kept (a failure's ``errorDescription`` is redacted when the record is made). A
/// logger that counts records or reads only their ``event``, ``statusCode`` and ``duration``
/// costs a request almost nothing; one that reads everything pays for the redaction once per
/// field. The record keeps at most 64 KiB of the request's and the response's bodies for their
/// excerpts. Nothing unredacted is reachable through the record, its `description` or its mirror
/// (`dump`, `String(reflecting:)`).
public struct NetworkLogRecord: Sendable, CustomStringConvertible, CustomReflectable {
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
    /// The response status, for ``Event/response``.
    public let statusCode: Int?
    /// The time from sending to this record, for ``Event/response`` and ``Event/failure``.
    public let duration: TimeInterval?
    /// The same number on every record of one logical request (its request record, then its
    /// response or failure), unique in the process; `0` for a record made by hand.
    public let requestID: UInt64
    /// When the record was made.
    public let timestamp: Date
    private let content: LogRecordContent

    /// The request method, such as `GET`.
    public var method: String { content.method }
    /// The URL, with sensitive query values and user info redacted, and the request's credential
    /// values scrubbed wherever they appear.
    public var url: String { content.url }
    /// Request headers (for ``Event/request``) or response headers, with credentials redacted;
    /// empty for the other events.
    public var headers: [String: String] { content.headers }
    /// The start of the body (at most 1 KiB), with credentials redacted; `nil` when there is none.
    public var bodyExcerpt: String? { content.bodyExcerpt }
    /// The size of the body the excerpt comes from (for the HAR recorder); `nil` when unknown.
    var bodySize: Int? { content.bodySize }
    /// About how many bytes of text the record keeps alive (for the HAR recorder's budget).
    var retainedBytes: Int { content.retainedBytes }
    /// The failure, redacted, for ``Event/failure``.
    public var errorDescription: String? { content.errorDescription }
    /// What happened, for the step events (``Event/redirect``, ``Event/retry``,
    /// ``Event/refresh``, ``Event/cache``); `nil` for the others. A redirect's target is redacted.
    public var step: ExchangeStep? { content.step }
    /// The request's timings, sizes and steps, for ``Event/response`` and ``Event/failure``
    /// records of the service, with every URL in them redacted; `nil` otherwise.
    public var metrics: RequestMetrics? { content.metrics }

    /// Creates a record. The values are stored as given: redact them before.
    public init(
        event: Event, method: String, url: String, statusCode: Int? = nil, headers: [String: String] = [:],
        bodyExcerpt: String? = nil, duration: TimeInterval? = nil, errorDescription: String? = nil,
        requestID: UInt64 = 0, timestamp: Date = Date(), step: ExchangeStep? = nil, metrics: RequestMetrics? = nil
    ) {
        self.init(
            event: event, statusCode: statusCode, duration: duration, requestID: requestID, timestamp: timestamp,
            content: .literal(
                method: method, url: url, headers: headers, bodyExcerpt: bodyExcerpt,
                errorDescription: errorDescription, step: step, metrics: metrics))
    }

    init(
        event: Event, statusCode: Int? = nil, duration: TimeInterval? = nil, requestID: UInt64,
        timestamp: Date = Date(), content: LogRecordContent
    ) {
        self.event = event
        self.statusCode = statusCode
        self.duration = duration
        self.requestID = requestID
        self.timestamp = timestamp
        self.content = content
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

    /// The record's public fields, redacted: what `dump` and `String(reflecting:)` show (never the
    /// raw material the record is redacted from).
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "event": event, "method": method, "url": url, "statusCode": statusCode as Any, "headers": headers,
                "bodyExcerpt": bodyExcerpt as Any, "duration": duration as Any,
                "errorDescription": errorDescription as Any, "requestID": requestID, "timestamp": timestamp,
                "step": step as Any, "metrics": metrics as Any,
            ], displayStyle: .struct)
    }
}
