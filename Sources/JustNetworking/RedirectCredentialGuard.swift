import GentleNetworking

/// The task delegate of every data task the `URLSession` requester creates: on a redirect to
/// another origin it removes `Authorization`, `Cookie` and `Proxy-Authorization` from the new
/// request (corelibs' URLSession on Linux forwards every header to wherever a server points),
/// then lets the session's own delegate decide, as before, whether to follow.
final class RedirectCredentialGuard: NSObject, URLSessionTaskDelegate, Sendable {
    /// The URL the request was first sent to: credentials stay within its origin.
    let originalURL: URL?

    init(originalURL: URL?) {
        self.originalURL = originalURL
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        var next = request
        if !Origin.isSameOrigin(originalURL, request.url) {
            for header in Origin.credentialHeaders {
                next.setValue(nil, forHTTPHeaderField: header)
            }
        }
        guard let delegate = session.delegate as? any URLSessionTaskDelegate else {
            completionHandler(next)
            return
        }
        #if canImport(Darwin)
            guard let decide = delegate.urlSession(_:task:willPerformHTTPRedirection:newRequest:completionHandler:)
            else {
                completionHandler(next)
                return
            }
            decide(session, task, response, next, completionHandler)
        #else
            delegate.urlSession(
                session, task: task, willPerformHTTPRedirection: response, newRequest: next,
                completionHandler: completionHandler)
        #endif
    }
}
