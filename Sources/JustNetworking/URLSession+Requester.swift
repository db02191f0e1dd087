import GentleNetworking

extension URLSession: Requester {
    /// Sends `request` with a data task of this session and calls `response` once on
    /// `request.responseQueue`.
    ///
    /// - No base URL set: ``JustNetworkingError/baseURLNotSet(router:)``, and no task is created.
    /// - A non-2xx status: ``JustNetworkingError/unacceptableStatusCode(statusCode:headers:body:)``
    ///   with the body. Redirects are followed as the session's delegate decides; on a hop to
    ///   another origin (scheme, host or port), `Authorization`, `Cookie` and
    ///   `Proxy-Authorization` are removed first.
    /// - A response that is not HTTP: ``JustNetworkingError/notHTTPResponse``.
    /// - A `URLError` (including `.cancelled`) or the parser's error is delivered unchanged.
    public func execute<T: Request>(_ request: T, response: @escaping RequestResponse<T.Response>) {
        guard let urlRequest = RequesterDelivery.urlRequest(for: request, response: response) else { return }
        let task = dataTask(with: urlRequest) { data, urlResponse, error in
            let outcome: RequesterDelivery.Outcome
            if let error {
                outcome = .failure(error)
            } else if let httpResponse = urlResponse as? HTTPURLResponse {
                outcome = .body(
                    data ?? Data(), statusCode: httpResponse.statusCode,
                    headers: httpResponse.stringHeaders)
            } else {
                outcome = .failure(JustNetworkingError.notHTTPResponse)
            }
            RequesterDelivery.deliver(outcome, for: request, response: response)
        }
        // Credentials never follow a redirect to another origin; the session's delegate, if
        // any, still decides whether to follow.
        task.delegate = RedirectCredentialGuard(originalURL: urlRequest.url)
        task.resume()
    }
}
