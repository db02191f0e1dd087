import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A fixed HTTP response, for tests and previews.
public struct CannedResponse: Sendable {
    /// The body.
    public let data: Data
    /// The status code; 200 by default.
    public let statusCode: Int
    /// The HTTP version reported in the response; `"HTTP/1.1"` by default.
    public let httpVersion: String?
    /// The response headers; none by default.
    public let headerFields: [String: String]?
    /// The pieces ``HTTPTransportProtocol/stream(for:)`` delivers the body in: `[data]` unless
    /// made with ``init(chunks:delay:statusCode:httpVersion:headerFields:)``.
    public let chunks: [Data]
    /// The seconds a stream waits before each chunk; 0 unless made with
    /// ``init(chunks:delay:statusCode:httpVersion:headerFields:)``.
    public let chunkDelay: TimeInterval

    /// Creates a response from raw bytes.
    ///
    /// - Parameters:
    ///   - data: The body.
    ///   - statusCode: The status; 200 by default.
    ///   - httpVersion: The reported HTTP version; `"HTTP/1.1"` by default.
    ///   - headerFields: Response headers; `nil` by default.
    public init(
        data: Data,
        statusCode: Int = 200,
        httpVersion: String? = "HTTP/1.1",
        headerFields: [String: String]? = nil
    ) {
        self.data = data
        self.statusCode = statusCode
        self.httpVersion = httpVersion
        self.headerFields = headerFields
        self.chunks = [data]
        self.chunkDelay = 0
    }

    /// Creates a response whose body is streamed in `chunks`, each after `delay` seconds (for
    /// tests of Server-Sent Events, JSON Lines and other streamed bodies); ``data`` is the
    /// chunks joined, what ``HTTPTransportProtocol/data(for:)`` returns.
    ///
    /// ```swift
    /// let transport = CannedResponseTransport(cannedResponse: CannedResponse(
    ///     chunks: [Data("data: Hel".utf8), Data("lo\n\n".utf8)], delay: 0.05,
    ///     headerFields: ["Content-Type": "text/event-stream"]))
    /// ```
    ///
    /// - Parameters:
    ///   - chunks: The body's pieces, in order; an empty piece is delivered as nothing.
    ///   - delay: Seconds before each chunk; 0 by default. Negative, NaN and infinite values
    ///     mean none (a canned stream never waits forever); cancelling the stream stops a wait.
    ///   - statusCode: The status; 200 by default.
    ///   - httpVersion: The reported HTTP version; `"HTTP/1.1"` by default.
    ///   - headerFields: Response headers; `nil` by default.
    public init(
        chunks: [Data],
        delay: TimeInterval = 0,
        statusCode: Int = 200,
        httpVersion: String? = "HTTP/1.1",
        headerFields: [String: String]? = nil
    ) {
        self.data = chunks.reduce(into: Data()) { $0.append($1) }
        self.statusCode = statusCode
        self.httpVersion = httpVersion
        self.headerFields = headerFields
        self.chunks = chunks.filter { !$0.isEmpty }
        self.chunkDelay = delay.isFinite && delay > 0 ? delay : 0
    }

    /// The body as a canned transport streams it: ``chunks``, each after ``chunkDelay``.
    public func makeStream() -> HTTPByteStream {
        .chunks(chunks, delay: chunkDelay)
    }

    /// Creates a response from text.
    ///
    /// - Parameters:
    ///   - string: The body text.
    ///   - encoding: How the text becomes bytes; UTF-8 by default. Characters the encoding
    ///     cannot represent are replaced lossily rather than dropping the body.
    ///   - statusCode: The status; 200 by default.
    ///   - httpVersion: The reported HTTP version; `"HTTP/1.1"` by default.
    ///   - headerFields: Response headers; `nil` by default.
    public init(
        string: String,
        encoding: String.Encoding = .utf8,
        statusCode: Int = 200,
        httpVersion: String? = "HTTP/1.1",
        headerFields: [String: String]? = nil
    ) {
        let data = string.data(using: encoding, allowLossyConversion: true) ?? Data(string.utf8)
        self.init(data: data, statusCode: statusCode, httpVersion: httpVersion, headerFields: headerFields)
    }

    /// Why a ``CannedResponse`` could not become an `HTTPURLResponse`.
    public enum Error: Swift.Error, Sendable, Hashable {
        /// The status code is not a valid HTTP status (100 to 999), or there is no URL to
        /// answer, so no `HTTPURLResponse` can be made.
        case failedToCreateHTTPURLResponse
    }

    /// The `HTTPURLResponse` for a request to `url`, with this status, version and headers.
    ///
    /// - Throws: ``Error/failedToCreateHTTPURLResponse`` when ``statusCode`` is not within
    ///   100...999.
    public func makeResponse(url: URL) throws -> HTTPURLResponse {
        guard (100...999).contains(statusCode),
            let response = HTTPURLResponse(
                url: url, statusCode: statusCode, httpVersion: httpVersion, headerFields: headerFields)
        else {
            throw Error.failedToCreateHTTPURLResponse
        }
        return response
    }

    /// The body and response as a transport returns them for `request`.
    ///
    /// - Throws: ``Error/failedToCreateHTTPURLResponse`` when the status code is not a valid
    ///   HTTP status or the request has no URL.
    public func makeResponse(for request: URLRequest) throws -> (Data, HTTPURLResponse) {
        guard let url = request.url else { throw Error.failedToCreateHTTPURLResponse }
        return (data, try makeResponse(url: url))
    }
}
