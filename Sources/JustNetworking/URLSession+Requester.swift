import GentleNetworking

extension URLSession: Requester {
    /// Sends `request` with this session and calls `response` once on `request.responseQueue`.
    ///
    /// - No base URL set: ``JustNetworkingError/baseURLNotSet(router:)``, and nothing is sent.
    /// - A non-2xx status: ``JustNetworkingError/unacceptableStatusCode(statusCode:headers:body:)``
    ///   with the body.
    /// - A response that is not HTTP: ``JustNetworkingError/notHTTPResponse``.
    /// - A `URLError` (including `.cancelled` and `.timedOut`) or the parser's error is delivered
    ///   unchanged (a `DecodingError`'s text cut to 512 bytes and scrubbed of the request's
    ///   credentials, its case and coding path kept).
    /// - Redirects follow the transports' rules: none out of `http`/`https` or from `https` to
    ///   `http` (the 3xx is delivered); on a hop to another origin (scheme, host or port) the
    ///   credential headers (`Origin.credentialHeaders`) and the URL's user info are removed
    ///   first. A session whose configuration adds a credential header itself: on Apple
    ///   platforms such a hop is not taken at all (an upgrade to `https` on the same host
    ///   excepted); on Linux it is taken without that header (the transport adds the
    ///   configuration's headers to each request itself).
    ///
    /// On Linux the session sends through a ``URLSessionTransport`` made from it (one per
    /// session, kept for the 8 most recently used), because a data task of corelibs' URLSession
    /// never completes on a 401 with `WWW-Authenticate` (unless a delegate answers it), re-sends
    /// a 307/308 with an empty body, restarts its timeout on every chunk and holds any body in
    /// memory. So there, a 401 is delivered, a 307/308 sends the body again, the request's
    /// timeout is an idle timeout that holds, redirects stop after 10, and at most 100 MiB of
    /// body is held (past it: `TransportError(.responseTooLarge)`). Such a request starts on a
    /// session of the transport's own, made from this one's configuration, so invalidating this
    /// session does not cancel it. A session with a delegate of its own is asked about each
    /// redirect the transport's rules allow (`urlSession(_:task:willPerformHTTPRedirection:
    /// newRequest:completionHandler:)` on its delegate queue, with the transport's task that
    /// ended with the 3xx and the request already stripped of credentials for another origin;
    /// no answer within the request's timeout is `URLError(.timedOut)`); it is not called
    /// otherwise. That task belongs to the transport's session, not to this one: its
    /// `taskIdentifier` may equal one of this session's own tasks', so a delegate that keeps
    /// state by task identifier must not look it up by that task.
    /// On Apple platforms it is a data task of this session, whose delegate decides redirects
    /// (after the rules above) and challenges. A background session cannot run such a task
    /// (Apple raises an exception): it gets ``JustNetworkingError/invalidRequest(reason:)``,
    /// nothing sent. A session already invalidated raises one too, which no public API can
    /// check beforehand: do not execute on a session after invalidating it.
    public func execute<T: Request>(_ request: T, response: @escaping RequestResponse<T.Response>) {
        guard let urlRequest = RequesterDelivery.urlRequest(for: request, response: response) else { return }
        #if !canImport(Darwin) && !GENTLE_APPLE_TYPECHECK
            let transport = SessionRequesterTransports.transport(for: self)
            Task {
                let outcome: RequesterDelivery.Outcome
                do {
                    let (data, httpResponse) = try await transport.data(for: urlRequest)
                    outcome = .body(data, statusCode: httpResponse.statusCode, headers: httpResponse.stringHeaders)
                } catch {
                    outcome = .failure(SessionRequesterTransports.deliverable(error))
                }
                RequesterDelivery.deliver(outcome, for: request, sent: urlRequest, response: response)
            }
        #else
            // A background session raises an Objective-C exception for a data task with a
            // completion handler, which would take the process down.
            if configuration.identifier != nil {
                RequesterDelivery.deliver(
                    .failure(
                        JustNetworkingError.invalidRequest(
                            reason: "A background URLSession cannot run a data task with a completion handler; "
                                + "execute requests on a default or ephemeral session.")),
                    for: request, sent: nil, response: response)
                return
            }
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
                RequesterDelivery.deliver(outcome, for: request, sent: urlRequest, response: response)
            }
            // Credentials never follow a redirect to another origin; the session's delegate, if
            // any, still decides whether to follow.
            task.delegate = RedirectCredentialGuard(originalURL: urlRequest.url)
            task.resume()
        #endif
    }
}

/// The ``URLSessionTransport`` the `URLSession` requester sends through on Linux, one per session.
///
/// The most recently used sessions' transports are kept (at most ``capacity``), so a session's
/// requests share one transport and its connections; a session in the cache stays alive until
/// it is evicted.
enum SessionRequesterTransports {
    /// How many sessions' transports are kept.
    static let capacity = 8

    /// Most recently used last.
    private static let cache = Locked<[(session: ObjectIdentifier, transport: URLSessionTransport)]>([])

    /// The transport for `session`, made on first use.
    static func transport(for session: URLSession) -> URLSessionTransport {
        let key = ObjectIdentifier(session)
        return cache.withLock { entries in
            if let index = entries.firstIndex(where: { $0.session == key }) {
                let entry = entries.remove(at: index)
                entries.append(entry)
                return entry.transport
            }
            let transport = URLSessionTransport(session: session, redirectApprover: redirectApprover(for: session))
            entries.append((key, transport))
            if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
            return transport
        }
    }

    /// For a session whose delegate takes task events: asks it about each redirect, on the
    /// session's delegate queue, as a data task of the session would.
    static func redirectApprover(for session: URLSession) -> URLSessionTransport.RedirectApprover? {
        guard session.delegate is any URLSessionTaskDelegate else { return nil }
        return { [weak session] task, response, next, answer in
            guard let session, let delegate = session.delegate as? any URLSessionTaskDelegate else {
                answer(next)
                return
            }
            session.delegateQueue.addOperation {
                delegate.urlSession(
                    session, task: task, willPerformHTTPRedirection: response, newRequest: next,
                    completionHandler: answer)
            }
        }
    }

    /// What the requester delivers for the transport's `error`: what a data task of the
    /// session would have delivered where it has an equivalent (the session's `URLError`; a
    /// cancellation, deadline or redirect limit as `URLError` `.cancelled`, `.timedOut`,
    /// `.httpTooManyRedirects`; a `URLProtocol`'s own error; a response that is not HTTP as
    /// ``JustNetworkingError/notHTTPResponse``), otherwise the transport's error (a body over
    /// the limit, conflicting framing).
    static func deliverable(_ error: any Error) -> any Error {
        guard let transportError = error as? TransportError else {
            if error is CancellationError { return URLError(.cancelled) }
            return error
        }
        if let urlError = transportError.underlyingError as? URLError { return urlError }
        var userInfo: [String: Any] = [NSLocalizedDescriptionKey: transportError.message]
        if let url = transportError.url {
            userInfo[NSURLErrorFailingURLErrorKey] = url
        }
        switch transportError.code {
        case .timedOut:
            return URLError(.timedOut, userInfo: userInfo)
        case .tooManyRedirects:
            return URLError(.httpTooManyRedirects, userInfo: userInfo)
        case .badResponse where transportError.message == TransportError.notHTTPResponseMessage:
            return JustNetworkingError.notHTTPResponse
        case .other:
            return transportError.underlyingError ?? transportError
        default:
            return transportError
        }
    }
}
