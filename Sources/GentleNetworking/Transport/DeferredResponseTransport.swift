import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport that can return a response's status without building its `HTTPURLResponse`.
///
/// On Linux, `HTTPURLResponse.init` canonicalizes every header name through Foundation string
/// APIs and costs more per request than anything else on the client side. When a caller only
/// needs the status and body (``HTTPNetworkService/request(to:via:)`` decoding a 2xx body), it
/// skips that work; error paths still build the full response.
protocol DeferredResponseTransport: HTTPTransportProtocol {
    /// Sends `request` like `data(for:)`, deferring the construction of the response.
    func deferredData(for request: URLRequest) async throws -> (Data, DeferredResponse)
}

/// A response's status, and the full `HTTPURLResponse` on demand.
struct DeferredResponse: Sendable {
    /// The HTTP status code.
    let statusCode: Int
    /// The URL the response came from (after redirects), as the built response would have it.
    let url: URL?
    private let build: @Sendable () throws -> HTTPURLResponse

    init(statusCode: Int, url: URL?, build: @escaping @Sendable () throws -> HTTPURLResponse) {
        self.statusCode = statusCode
        self.url = url
        self.build = build
    }

    /// A response already built.
    init(_ response: HTTPURLResponse) {
        self.init(statusCode: response.statusCode, url: response.url) { response }
    }

    /// Builds the `HTTPURLResponse` (each call builds a new one).
    func response() throws -> HTTPURLResponse {
        try build()
    }
}
