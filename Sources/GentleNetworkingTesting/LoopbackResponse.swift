import Foundation

/// What the loopback server answers, including faults to inject.
public struct LoopbackResponse: Sendable {
    /// The status code.
    public var status: Int
    /// The headers. `Content-Length` (or `Transfer-Encoding: chunked`) is added automatically.
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: Data
    /// Send the body with `Transfer-Encoding: chunked`, in chunks of ``chunkSize`` bytes.
    public var chunked = false
    /// The chunk size for chunked bodies and for pacing; 16 KiB by default.
    public var chunkSize = 16 * 1024
    /// Wait this long before sending the status line and headers.
    public var delayBeforeHeaders: TimeInterval = 0
    /// Send half the body, then wait this long before the rest.
    public var delayMidBody: TimeInterval = 0
    /// Send the headers and half the body, then close the connection.
    public var closeMidBody = false
    /// Send exactly these bytes instead of a formed response, then close the connection.
    public var rawBytes: Data?
    /// Close the connection after this response, even if the client wants keep-alive.
    public var closeConnection = false
    /// Send the body as these pieces instead of ``body``: one write (one chunk when chunked)
    /// each, ``segmentDelay`` apart; what a streaming server does.
    public var segments: [Data]?
    /// The pause before each segment after the first.
    public var segmentDelay: TimeInterval = 0
    /// Close the connection, mid-body, after this many segments.
    public var closeAfterSegments: Int?

    /// Creates a response.
    public init(status: Int = 200, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A `text/event-stream` response, chunked, one segment per event block (give each block
    /// its own fields and ending, such as `"id: 1\ndata: hello\n\n"`), `delay` seconds apart;
    /// with `closeAfter`, the connection is dropped after that many blocks, mid-body.
    public static func eventStream(
        _ blocks: [String], delay: TimeInterval = 0, closeAfter: Int? = nil, status: Int = 200
    ) -> LoopbackResponse {
        var response = LoopbackResponse(
            status: status, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")])
        response.chunked = true
        response.segments = blocks.map { Data($0.utf8) }
        response.segmentDelay = delay
        response.closeAfterSegments = closeAfter
        return response
    }

    /// A JSON response from text, with `Content-Type: application/json`.
    public static func json(
        _ text: String, status: Int = 200, headers: [(name: String, value: String)] = []
    )
        -> LoopbackResponse
    {
        LoopbackResponse(
            status: status, headers: [("Content-Type", "application/json")] + headers, body: Data(text.utf8))
    }

    /// A JSON response encoding `value`, with `Content-Type: application/json`.
    public static func json<T: Encodable>(encoding value: T, status: Int = 200) -> LoopbackResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = (try? encoder.encode(value)) ?? Data("null".utf8)
        return LoopbackResponse(status: status, headers: [("Content-Type", "application/json")], body: data)
    }

    /// A plain-text response.
    public static func text(_ text: String, status: Int = 200) -> LoopbackResponse {
        LoopbackResponse(
            status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Data(text.utf8))
    }

    /// An empty response with `status`.
    public static func status(_ status: Int) -> LoopbackResponse {
        LoopbackResponse(status: status)
    }

    /// A redirect to `location`.
    public static func redirect(to location: String, status: Int = 302) -> LoopbackResponse {
        LoopbackResponse(status: status, headers: [("Location", location)])
    }

    /// Raw bytes written verbatim, then the connection is closed: for malformed responses.
    public static func raw(_ bytes: String) -> LoopbackResponse {
        var response = LoopbackResponse()
        response.rawBytes = Data(bytes.utf8)
        return response
    }

    /// This response, with a header added.
    public func adding(header name: String, _ value: String) -> LoopbackResponse {
        var copy = self
        copy.headers.append((name, value))
        return copy
    }

    /// This response, with fault injection applied by `change`.
    public func with(_ change: (inout LoopbackResponse) -> Void) -> LoopbackResponse {
        var copy = self
        change(&copy)
        return copy
    }
}
