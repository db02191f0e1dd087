import Foundation

/// Timing and size figures of one exchange on the wire: one request sent and its response. A
/// redirect chain has one per hop, and a retried request one per attempt (see
/// ``RequestMetrics``).
///
/// Times are offsets in seconds from ``fetchStart``, in the order the phases happen; each one is
/// `nil` where the transport cannot know it or the phase did not happen (no DNS lookup, TCP
/// connect or TLS handshake on a reused connection, no TLS for `http`). Which fields each
/// transport fills is tabled in the README ("Observing requests"):
/// - ``CurlTransport``: every field from libcurl's transfer info, except ``requestEnd``, which
///   libcurl 7.88 does not report;
/// - `URLSessionTransport` on Apple platforms: every field, from `URLSessionTaskMetrics`;
/// - `URLSessionTransport` on Linux: corelibs collects no metrics, so the transport measures what
///   it sees itself (``fetchStart``, ``responseStart``, ``responseEnd``, body bytes, the status)
///   and leaves the rest `nil`.
///
/// Every value is safe to log: the URL is redacted like log records, and nothing here carries a
/// header or body.
public struct TransactionMetrics: Sendable, Equatable {
    /// Where the figures came from.
    public enum Source: String, Sendable {
        /// libcurl's transfer info (``CurlTransport``).
        case libcurl
        /// The system's `URLSessionTaskMetrics` (Apple platforms).
        case urlSessionTaskMetrics
        /// Measured by the transport from the delegate callbacks it sees (URLSession on Linux).
        case transport
    }

    /// The request method, such as `GET`.
    public var method: String
    /// The URL of this hop, redacted as log records are.
    public var url: String
    /// The response status; `nil` when the exchange failed before a status line arrived.
    public var statusCode: Int?
    /// Which attempt of the logical request this exchange belongs to: 1 for the first, one more
    /// for each retry (``RetryTransport``) or re-send with a refreshed credential
    /// (``ReauthTransport``).
    public var attempt: Int
    /// Which hop of the attempt's redirect chain this is: 0 for the request as sent, 1 after the
    /// first redirect.
    public var hop: Int
    /// When the transport started this exchange.
    public var fetchStart: Date
    /// When the host name was resolved; `nil` on a reused connection.
    public var domainLookupEnd: TimeInterval?
    /// When the TCP connection was established; `nil` on a reused connection.
    public var connectEnd: TimeInterval?
    /// When the TLS handshake finished; `nil` for `http` and on a reused connection.
    public var secureConnectionEnd: TimeInterval?
    /// When the request started going out.
    public var requestStart: TimeInterval?
    /// When the request had gone out completely.
    public var requestEnd: TimeInterval?
    /// When the first byte of the response arrived.
    public var responseStart: TimeInterval?
    /// When the response was complete (or the exchange failed).
    public var responseEnd: TimeInterval?
    /// The bytes of the request line and headers sent.
    public var requestHeaderBytes: Int64?
    /// The body bytes sent.
    public var requestBodyBytes: Int64?
    /// The bytes of the status line and headers received.
    public var responseHeaderBytes: Int64?
    /// The body bytes received, as they came over the wire (compressed, before decoding).
    public var responseBodyWireBytes: Int64?
    /// The body bytes after content decoding (gzip, deflate, br, zstd): what the caller got.
    public var responseBodyDecodedBytes: Int64?
    /// The protocol, as ALPN names it: `http/1.0`, `http/1.1`, `h2`, `h3`.
    public var networkProtocol: String?
    /// Whether the exchange went over a connection kept from an earlier one.
    public var isReusedConnection: Bool?
    /// The IP address the transport connected to.
    public var remoteAddress: String?
    /// The port the transport connected to.
    public var remotePort: Int?
    /// Where the figures came from.
    public var source: Source

    /// Creates metrics; every figure not given is `nil`.
    public init(
        method: String, url: String, statusCode: Int? = nil, attempt: Int = 1, hop: Int = 0, fetchStart: Date,
        domainLookupEnd: TimeInterval? = nil, connectEnd: TimeInterval? = nil,
        secureConnectionEnd: TimeInterval? = nil, requestStart: TimeInterval? = nil, requestEnd: TimeInterval? = nil,
        responseStart: TimeInterval? = nil, responseEnd: TimeInterval? = nil, requestHeaderBytes: Int64? = nil,
        requestBodyBytes: Int64? = nil, responseHeaderBytes: Int64? = nil, responseBodyWireBytes: Int64? = nil,
        responseBodyDecodedBytes: Int64? = nil, networkProtocol: String? = nil, isReusedConnection: Bool? = nil,
        remoteAddress: String? = nil, remotePort: Int? = nil, source: Source
    ) {
        self.method = method
        self.url = url
        self.statusCode = statusCode
        self.attempt = attempt
        self.hop = hop
        self.fetchStart = fetchStart
        self.domainLookupEnd = domainLookupEnd
        self.connectEnd = connectEnd
        self.secureConnectionEnd = secureConnectionEnd
        self.requestStart = requestStart
        self.requestEnd = requestEnd
        self.responseStart = responseStart
        self.responseEnd = responseEnd
        self.requestHeaderBytes = requestHeaderBytes
        self.requestBodyBytes = requestBodyBytes
        self.responseHeaderBytes = responseHeaderBytes
        self.responseBodyWireBytes = responseBodyWireBytes
        self.responseBodyDecodedBytes = responseBodyDecodedBytes
        self.networkProtocol = networkProtocol
        self.isReusedConnection = isReusedConnection
        self.remoteAddress = remoteAddress
        self.remotePort = remotePort
        self.source = source
    }

    /// The DNS lookup's duration; `nil` when there was none.
    public var domainLookup: TimeInterval? { domainLookupEnd }

    /// The TCP connect's duration (after the lookup); `nil` when there was none.
    public var connect: TimeInterval? {
        connectEnd.map { $0 - (domainLookupEnd ?? 0) }
    }

    /// The TLS handshake's duration; `nil` when there was none.
    public var secureConnection: TimeInterval? {
        guard let secureConnectionEnd else { return nil }
        return secureConnectionEnd - (connectEnd ?? domainLookupEnd ?? 0)
    }

    /// The time from the start to the first response byte.
    public var timeToFirstByte: TimeInterval? { responseStart }

    /// The exchange's whole duration.
    public var total: TimeInterval? { responseEnd }

    /// The offsets that are known, in the order the phases happen; a plausible exchange has them
    /// non-decreasing.
    public var orderedOffsets: [TimeInterval] {
        [domainLookupEnd, connectEnd, secureConnectionEnd, requestStart, requestEnd, responseStart, responseEnd]
            .compactMap { $0 }
    }

    /// Such as `GET 200 h2 dns 1.2 ms, connect 0.3 ms, tls 4.1 ms, first byte 9.8 ms, total 10.2 ms`.
    public var summary: String {
        var parts: [String] = []
        func add(_ name: String, _ value: TimeInterval?) {
            guard let value else { return }
            parts.append("\(name) \(Self.milliseconds(value))")
        }
        add("dns", domainLookup)
        add("connect", connect)
        add("tls", secureConnection)
        add("first byte", timeToFirstByte)
        add("total", total)
        let status = statusCode.map(String.init) ?? "no response"
        let reused = isReusedConnection == true ? " reused" : ""
        let timings = parts.isEmpty ? "" : " " + parts.joined(separator: ", ")
        return "\(method) \(status)\(networkProtocol.map { " \($0)" } ?? "")\(reused)\(timings)"
    }

    /// `value` seconds as milliseconds with one decimal, without `String(format:)` (slow on Linux).
    static func milliseconds(_ value: TimeInterval) -> String {
        guard value.isFinite else { return "? ms" }
        let tenths = Int((max(-Clamp.maxSeconds, min(value, Clamp.maxSeconds)) * 10_000).rounded())
        let sign = tenths < 0 ? "-" : ""
        let magnitude = tenths.magnitude
        return "\(sign)\(magnitude / 10).\(magnitude % 10) ms"
    }
}
