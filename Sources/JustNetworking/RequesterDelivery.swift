import GentleNetworking

/// The delivery steps both requesters share.
enum RequesterDelivery {
    /// The outcome of the exchange, before parsing: only values that may cross threads.
    enum Outcome: Sendable {
        case body(Data, statusCode: Int, headers: [String: String])
        case failure(any Error)
    }

    /// Builds and checks the URL request, or delivers ``JustNetworkingError/baseURLNotSet(router:)``
    /// or ``JustNetworkingError/invalidRequest(reason:)`` (a header that cannot be sent, a URL
    /// that is not `http`/`https` with a host) on the response queue and returns `nil`.
    static func urlRequest<T: Request>(
        for request: T, response: @escaping RequestResponse<T.Response>
    ) -> URLRequest? {
        do {
            // Any Double is a timeout: a session's own data task (Apple platforms) gets one the
            // system accepts (on Linux, corelibs trapped on NaN and infinity).
            let urlRequest = Clamp.sessionSafeTimeout(try request.makeURLRequest())
            // Sent as every transport sends it, whichever requester runs it.
            do throws(TransportError) {
                return try RequestValidator.prepared(urlRequest)
            } catch {
                throw JustNetworkingError.invalidRequest(reason: error.message)
            }
        } catch {
            deliver(.failure(error), for: request, sent: nil, response: response)
            return nil
        }
    }

    /// Checks the status, parses the body and calls `response`, all on the request's queue.
    ///
    /// A `DecodingError` the parser throws is delivered as one of the same case and coding path,
    /// its text cut to 512 bytes and scrubbed of `sent`'s credential values
    /// (`DecodingFailure.sanitized`): the decoder quotes the server's values, so a 50 MB enum
    /// value made a 50 MB error, and a token the server echoed reached the caller's logs.
    /// `sent` is the request as the requester built it: a credential a transport of the stack
    /// adds later (a `ReauthTransport`'s refreshed token) is scrubbed only when its header's
    /// name says it is one (`Authorization` does).
    static func deliver<T: Request>(
        _ outcome: Outcome, for request: T, sent: URLRequest?, response: @escaping RequestResponse<T.Response>
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
                    result = .failure(DecodingFailure.sanitized(error, sentWith: sent))
                }
                response(result)
            }
        }
    }
}
