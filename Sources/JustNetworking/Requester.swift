/// The callback of ``Requester/execute(_:response:)``: the parsed value, or the error.
public typealias RequestResponse<T> = @Sendable (Result<T, any Error>) -> Void

/// ``RequestResponse`` under the name the JustNetworking README uses.
public typealias Response<T> = RequestResponse<T>

/// Runs requests: the network client behind JustNetworking.
///
/// Two ship with the library: `URLSession` and ``TransportRequester`` (any GentleNetworking
/// transport stack, so retries, re-auth and ETags apply). Both behave the same:
/// - the URL request comes from ``Request/makeURLRequest()``; when no base URL is set the
///   failure is ``JustNetworkingError/baseURLNotSet(router:)`` and nothing is sent;
/// - a non-2xx status fails with ``JustNetworkingError/unacceptableStatusCode(statusCode:headers:body:)``;
/// - the parser and the callback run on the request's ``Request/responseQueue``;
/// - what the parser throws, and transport errors (`URLError`, `TransportError`,
///   `CancellationError`), are delivered unchanged;
/// - the callback runs exactly once.
public protocol Requester {
    /// Sends `request` and calls `response` once with the parsed value or the error.
    ///
    /// - Parameters:
    ///   - request: What to send, how to parse it and where to deliver it.
    ///   - response: Called on `request.responseQueue`.
    func execute<T: Request>(_ request: T, response: @escaping RequestResponse<T.Response>)
}

/// The delivery steps both requesters share.
enum RequesterDelivery {
    /// The outcome of the exchange, before parsing: only values that may cross threads.
    enum Outcome: Sendable {
        case body(Data, statusCode: Int, headers: [String: String])
        case failure(any Error)
    }

    /// Builds the URL request, or delivers ``JustNetworkingError/baseURLNotSet(router:)`` on the
    /// response queue and returns `nil`.
    static func urlRequest<T: Request>(
        for request: T, response: @escaping RequestResponse<T.Response>
    ) -> URLRequest? {
        do {
            return try request.makeURLRequest()
        } catch {
            deliver(.failure(error), for: request, response: response)
            return nil
        }
    }

    /// Checks the status, parses the body and calls `response`, all on the request's queue.
    static func deliver<T: Request>(
        _ outcome: Outcome, for request: T, response: @escaping RequestResponse<T.Response>
    ) {
        request.responseQueue.async {
            switch outcome {
            case .failure(let error):
                response(.failure(error))
            case .body(let data, let statusCode, let headers):
                guard (200..<300).contains(statusCode) else {
                    response(
                        .failure(
                            JustNetworkingError.unacceptableStatusCode(
                                statusCode: statusCode, headers: headers, body: data)))
                    return
                }
                let result: Result<T.Response, any Error>
                do {
                    result = .success(try request.requestParser(data))
                } catch {
                    result = .failure(error)
                }
                response(result)
            }
        }
    }

    /// The header fields of `response` as strings.
    static func headers(of response: HTTPURLResponse) -> [String: String] {
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            headers[String(describing: name)] = String(describing: value)
        }
        return headers
    }
}
