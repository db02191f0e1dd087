/// Everything a ``Requester`` needs to run one request: how to build it, how to parse the body,
/// and the queue the result is delivered on.
///
/// ``RequestType`` covers most needs; conform to this protocol directly for special cases.
public protocol Request: Sendable {
    /// The value a successful response is parsed into.
    associatedtype Response

    /// The queue the parser and the callback run on, so the response value never crosses threads.
    var responseQueue: DispatchQueue { get }
    /// Turns the body of a 2xx response into ``Response``; what it throws is delivered as the
    /// failure (a `DecodingError` as one of the same case and coding path, its text cut to 512
    /// bytes and scrubbed of the request's credentials: the decoder quotes the server's values).
    var requestParser: RequestParser<Response> { get }
    /// Builds the `URLRequest`.
    var requestFactory: RequestFactory { get }
}

extension Request {
    /// The request to send, as ``requestFactory`` builds it (see ``RequestFactory/urlRequest``).
    public var urlRequest: URLRequest {
        requestFactory.urlRequest
    }

    /// ``requestParser`` under the name the README's requester uses.
    public var parser: RequestParser<Response> {
        requestParser
    }

    /// The request to send, or ``JustNetworkingError/baseURLNotSet(router:)`` when no base URL
    /// is set (see ``RequestFactory/makeURLRequest()``).
    public func makeURLRequest() throws(JustNetworkingError) -> URLRequest {
        try requestFactory.makeURLRequest()
    }
}
