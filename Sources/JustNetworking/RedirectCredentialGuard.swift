import GentleNetworking

#if canImport(Darwin) || GENTLE_APPLE_TYPECHECK

    /// The task delegate of every data task the `URLSession` requester creates, applying the rules
    /// every GentleNetworking transport follows a redirect by, then letting the session's own
    /// delegate decide, as before, whether to follow:
    /// - a redirect to another scheme than `http`/`https`, or from `https` to `http`, is not
    ///   followed (the 3xx is the response);
    /// - on a redirect to another origin, the credential headers (``Origin/credentialHeaders``) and
    ///   the URL's user info are removed from the new request (corelibs' URLSession on Linux forwards
    ///   every header to wherever a server points, and keeps the user info on a `//other-host`
    ///   reference); and when the session's configuration adds a credential header itself
    ///   (`httpAdditionalHeaders`), which the session would add to the next hop again, such a
    ///   redirect is not followed at all.
    ///
    /// Apple platforms only: on Linux the requester sends through a `URLSessionTransport`, whose
    /// rules are the same and which asks the session's delegate through its `RedirectApprover`.
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
            guard let next = Self.nextRequest(request, after: response, originalURL: originalURL, session: session)
            else {
                completionHandler(nil)
                return
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

        /// `request` as the rules above let it be sent, or `nil` when the redirect is not followed.
        static func nextRequest(
            _ request: URLRequest, after response: HTTPURLResponse, originalURL: URL?, session: URLSession
        ) -> URLRequest? {
            var next = request
            guard let target = request.url, RedirectTracker.isFollowable(from: response.url, to: target) else {
                return nil
            }
            guard !Origin.isSameOrigin(originalURL, target) else { return next }
            let isCredential = { (name: String) in Origin.isCredentialHeader(name, listed: Origin.credentialHeaders) }
            // An upgrade to `https` on the same host may keep the session's own credential (the same
            // server, now protected); the request's credentials are dropped as on every transport.
            if RedirectTracker.sessionCredentialWouldCross(
                to: target, from: originalURL, configuration: session.configuration)
            {
                return nil
            }
            for header in Origin.credentialHeaders {
                next.setValue(nil, forHTTPHeaderField: header)
            }
            for header in (next.allHTTPHeaderFields ?? [:]).keys where isCredential(header) {
                next.setValue(nil, forHTTPHeaderField: header)
            }
            if target.user != nil || target.password != nil,
                var components = URLComponents(url: target, resolvingAgainstBaseURL: false)
            {
                components.user = nil
                components.password = nil
                next.url = components.url ?? target
            }
            return next
        }

    }
#endif
