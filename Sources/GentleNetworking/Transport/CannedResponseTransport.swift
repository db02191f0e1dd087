import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport that answers every request with the same ``CannedResponse``.
///
/// ```swift
/// let transport = CannedResponseTransport(string: #"{"id": 1}"#, statusCode: 200)
/// let service = HTTPNetworkService(transport: transport)
/// ```
/// It records the requests it receives in ``receivedRequests``, so tests can assert on them.
public final class CannedResponseTransport: HTTPTransportProtocol {
    /// Why a ``CannedResponseTransport`` could not answer a request.
    public enum Error: Swift.Error, Sendable, Hashable {
        /// The request has no URL, so no response can name one.
        case missingRequestURL
    }

    /// The response returned for every request.
    public let cannedResponse: CannedResponse
    private let requests = Locked<[URLRequest]>([])

    /// Creates a transport that always returns `cannedResponse`.
    public init(cannedResponse: CannedResponse) {
        self.cannedResponse = cannedResponse
    }

    /// Creates a transport that always returns `string` with `statusCode`.
    ///
    /// - Parameters:
    ///   - string: The body text.
    ///   - encoding: UTF-8 by default.
    ///   - statusCode: 200 by default.
    ///   - headerFields: `nil` by default.
    public convenience init(
        string: String,
        encoding: String.Encoding = .utf8,
        statusCode: Int = 200,
        headerFields: [String: String]? = nil
    ) {
        self.init(
            cannedResponse: CannedResponse(
                string: string, encoding: encoding, statusCode: statusCode, headerFields: headerFields))
    }

    /// Every request received so far, oldest first.
    public var receivedRequests: [URLRequest] { requests.current }

    /// Records `request` and returns the canned response.
    ///
    /// - Throws: `CancellationError` when the task is cancelled, ``Error/missingRequestURL``
    ///   when the request has no URL, and ``CannedResponse/Error/failedToCreateHTTPURLResponse``
    ///   when the canned status is not a valid HTTP status.
    public func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        try Task.checkCancellation()
        requests.withLock { $0.append(request) }
        guard let url = request.url else { throw Error.missingRequestURL }
        return (cannedResponse.data, try cannedResponse.makeResponse(url: url))
    }

    /// Records `request` and streams the canned body: its ``CannedResponse/chunks``, each after
    /// ``CannedResponse/chunkDelay``.
    ///
    /// - Throws: What ``data(for:)`` throws.
    public func stream(for request: URLRequest) async throws -> (HTTPByteStream, HTTPURLResponse) {
        let (_, response) = try await data(for: request)
        return (cannedResponse.makeStream(), response)
    }
}
