/// The callback of ``Requester/execute(_:response:)``: the parsed value, or the error.
public typealias RequestResponse<T> = @Sendable (Result<T, any Error>) -> Void

/// ``RequestResponse`` under the name the JustNetworking README uses.
public typealias Response<T> = RequestResponse<T>

/// Runs requests: the network client behind JustNetworking.
///
/// Two ship with the library: `URLSession` and ``TransportRequester`` (any GentleNetworking
/// transport stack, so retries, re-auth and ETags apply). Both share these rules:
/// - the URL request comes from ``Request/makeURLRequest()``; when no base URL is set the
///   failure is ``JustNetworkingError/baseURLNotSet(router:)`` and nothing is sent;
/// - a non-2xx status fails with ``JustNetworkingError/unacceptableStatusCode(statusCode:headers:body:)``;
/// - the parser and the callback run on the request's ``Request/responseQueue``;
/// - what the parser throws is delivered unchanged (a `DecodingError` as one of the same case
///   and coding path, its text cut to 512 bytes and scrubbed of the request's credentials: the
///   decoder quotes the server's values); so are the transport's errors (the
///   `URLSession` requester delivers `URLError`s where a data task would, see its
///   `execute(_:response:)`; ``TransportRequester`` the stack's `TransportError`s and
///   `CancellationError`);
/// - the callback runs exactly once.
public protocol Requester {
    /// Sends `request` and calls `response` once with the parsed value or the error.
    ///
    /// - Parameters:
    ///   - request: What to send, how to parse it and where to deliver it.
    ///   - response: Called on `request.responseQueue`.
    func execute<T: Request>(_ request: T, response: @escaping RequestResponse<T.Response>)
}
