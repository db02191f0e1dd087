import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends requests with a `URLSession`: the default transport on Apple platforms.
///
/// Beyond a plain `session.data(for:)`, it guarantees, on every platform:
/// - **Prompt cancellation.** Cancelling the calling task cancels the `URLSessionTask` and
///   throws `CancellationError` at once, without waiting for the session.
/// - **No credential leaks on redirect.** `Authorization`, `Cookie` and `Proxy-Authorization`
///   are removed when a redirect leaves the original origin (scheme, host or port). URLSession
///   on Linux forwards them otherwise.
/// - **Bounded redirects.** More than ``maxRedirects`` redirects, or a loop, throws
///   ``TransportError`` with code ``TransportError/Code/tooManyRedirects``.
/// - **Real deadlines.** The request's `timeoutInterval` is an idle timeout (no byte for that
///   long) and ``totalTimeout`` bounds the whole exchange; both are enforced by the transport
///   itself, because corelibs' URLSession on Linux restarts its timer on every chunk, ignores
///   the resource timeout, and can hang forever on a 401 that carries `WWW-Authenticate`.
/// - **Limits.** ``limits`` bound the decoded body held in memory and the response head
///   (``TransportError/Code/responseTooLarge``); conflicting or malformed `Content-Length`,
///   or `Transfer-Encoding` with `Content-Length`, is ``TransportError/Code/badResponse``.
/// - **Validation.** Only `http`/`https` URLs and valid header fields are sent
///   (``RequestValidator``).
/// - **Typed errors.** `URLError`s become ``TransportError``s, with the same code
///   ``CurlTransport`` gives for the same fault.
public final class URLSessionTransport: HTTPTransportProtocol {
    /// The session requests are sent with.
    public let session: URLSession
    /// The most redirects followed for one request; 10 by default. 0 disables redirects, and a
    /// 3xx is then returned as the response.
    public let maxRedirects: Int
    /// How much of a response is accepted; `ResponseLimits()` by default (100 MiB of body).
    public let limits: ResponseLimits
    /// The limit on a whole exchange in seconds; `nil` (the default) for none beyond the
    /// session's `timeoutIntervalForResource`, which this transport enforces too.
    public let totalTimeout: TimeInterval?
    /// The most bytes a stream (``stream(for:)``) holds in memory for a consumer that is behind;
    /// 1 MiB by default. On Apple platforms the task is suspended at that point; on Linux
    /// (corelibs cannot pause a transfer) what arrives next goes to disk, up to
    /// ``streamSpillLimit``.
    public let streamBufferSize: Int
    /// Linux: the most unread bytes a stream keeps on disk, past ``streamBufferSize``, for a
    /// consumer that is behind; 1 GiB by default, `0` for none. They sit in an owner-only
    /// temporary file that has no name (it is unlinked when made), read back in order and
    /// emptied whenever the consumer catches up, so the disk used is how far behind the consumer
    /// is. The file is in the temporary directory (`TMPDIR`): where that is a `tmpfs`, the bytes
    /// are in memory after all, so point `TMPDIR` at a disk for large streams to slow readers.
    /// Past the limit, or if the disk refuses the bytes, the stream fails with
    /// ``TransportError/Code/responseTooLarge``. Apple platforms do not use it: the task is
    /// suspended instead.
    public let streamSpillLimit: Int64
    #if !canImport(Darwin) && !GENTLE_APPLE_TYPECHECK
        /// Linux: the configuration's `httpAdditionalHeaders`, which this transport adds to each
        /// request that does not set them, so they are validated and, on a redirect to another
        /// origin, dropped like the request's own credentials. corelibs added them to every hop
        /// itself (an `Authorization` there reached any host a redirect named) and unchecked
        /// (CR/LF in a value went to libcurl as it was). The routed session is made without them.
        private let configurationHeaders: ConfigurationHeaders
        /// corelibs calls a task's own delegate for redirects only, never for data, so on Linux
        /// the exchanges run on a session made from `session`'s configuration whose delegate
        /// routes each task's events to its call: for every session, with a delegate of its own
        /// or not. (A task of a session with a delegate has to report through its completion
        /// handler, which gets the body only once it is complete: an endless body of no declared
        /// length grew memory until a deadline. The session's delegate was not called for such
        /// a task either: the task's own delegate took its redirects and challenges.)
        ///
        /// Made on first use, off the caller's thread (see ``SessionCall/corelibsQueue``).
        private let routed: Locked<RoutedSession>
    #endif
    /// Asked about each redirect after the transport's own rules; `nil` (the default) for the
    /// rules alone. See ``RedirectApprover``.
    private let redirectApprover: RedirectApprover?
    /// Checks each redirect's target before it is followed (see ``RedirectTracker/hopCheck``);
    /// `nil` for none. ``PinningTransport`` sets it on Apple platforms.
    private let redirectHopCheck: (@Sendable (URL) -> TransportError?)?

    /// Asked about a redirect the transport would follow, after its own rules (Linux): the task
    /// that ended with the 3xx (of the session the exchange runs on), the 3xx, the request the
    /// transport would send next, and the answer, with the request to send or `nil` to make the
    /// 3xx the response. For JustNetworking's requester over a session with a delegate of its
    /// own, whose delegate decides redirects.
    ///
    /// With an approver, every redirect the rules allow ends the session task with its 3xx and
    /// the transport sends the next request itself (as it does for a 307 that keeps the body), so
    /// corelibs never waits for the answer. A changed request is checked as the caller's own
    /// (``TransportError/Code/invalidRequest``) and follows the same rules: a target that is not
    /// followable keeps the 3xx, credentials are dropped for another origin, and a new target
    /// replaces the proposed one (one hop either way). No answer within the idle timeout (or
    /// what is left of the total one) is ``TransportError/Code/timedOut``; a cancelled caller
    /// does not wait for it. Only the first answer counts.
    package typealias RedirectApprover =
        @Sendable (URLSessionTask, HTTPURLResponse, URLRequest, @escaping @Sendable (URLRequest?) -> Void) -> Void

    /// Creates a transport.
    ///
    /// - Parameters:
    ///   - session: The session to send with; `URLSession.shared` by default. On Linux, its
    ///     configuration's `httpAdditionalHeaders` are put on each request that does not set them
    ///     (validated, and dropped on a redirect to another origin when they are credentials).
    ///     On Linux the exchanges run on a session of the transport's own, made from `session`'s
    ///     configuration (its cookie storage, cache, protocol classes and timeouts, clamped), with
    ///     a delegate of its own or not: invalidating `session` does not cancel them, and
    ///     `session`'s delegate is not called for them. On Apple platforms they are tasks of
    ///     `session`, whose delegate keeps the challenges it is asked (TLS trust).
    ///   - maxRedirects: The redirect limit; 10 by default. Negative values count as 0.
    ///   - limits: `ResponseLimits()` by default.
    ///   - totalTimeout: `nil` by default. NaN, zero and negative values mean none; infinite
    ///     and huge values are capped (never trapped on).
    ///   - streamBufferSize: ``streamBufferSize``; 1 MiB by default. Values below 1 count as 1.
    ///   - streamSpillLimit: ``streamSpillLimit``; 1 GiB by default. Negative values count as 0.
    public convenience init(
        session: URLSession = .shared, maxRedirects: Int = 10, limits: ResponseLimits = ResponseLimits(),
        totalTimeout: TimeInterval? = nil, streamBufferSize: Int = 1 << 20, streamSpillLimit: Int64 = 1 << 30
    ) {
        self.init(
            session: session, maxRedirects: maxRedirects, limits: limits, totalTimeout: totalTimeout,
            streamBufferSize: streamBufferSize, streamSpillLimit: streamSpillLimit, redirectApprover: nil)
    }

    /// A transport whose redirects `redirectApprover` approves after the transport's rules (see
    /// ``RedirectApprover``), and whose every redirect target `redirectHopCheck` may refuse first
    /// (the error it answers is the call's); otherwise as ``init(session:maxRedirects:limits:totalTimeout:streamBufferSize:streamSpillLimit:)``.
    package init(
        session: URLSession, maxRedirects: Int = 10, limits: ResponseLimits = ResponseLimits(),
        totalTimeout: TimeInterval? = nil, streamBufferSize: Int = 1 << 20, streamSpillLimit: Int64 = 1 << 30,
        redirectApprover: RedirectApprover?, redirectHopCheck: (@Sendable (URL) -> TransportError?)? = nil
    ) {
        self.redirectApprover = redirectApprover
        self.redirectHopCheck = redirectHopCheck
        self.session = session
        self.streamBufferSize = max(1, streamBufferSize)
        self.streamSpillLimit = max(0, streamSpillLimit)
        self.maxRedirects = max(0, maxRedirects)
        self.limits = limits
        self.totalTimeout = totalTimeout.flatMap(Clamp.timeout)
        #if !canImport(Darwin) && !GENTLE_APPLE_TYPECHECK
            self.routed = Locked(.notYetMade)
            self.configurationHeaders = ConfigurationHeaders(session.configuration)
        #endif
    }

    #if !canImport(Darwin) && !GENTLE_APPLE_TYPECHECK
        /// The routed session, made the first time it is needed (corelibs may block creating it).
        private static func routedSession(
            _ routed: Locked<RoutedSession>, for session: URLSession
        ) -> (URLSession, SessionRouter) {
            routed.withLock { state in
                switch state {
                case .made(let routedSession, let router):
                    return (routedSession, router)
                case .notYetMade:
                    let router = SessionRouter(cookies: SessionCookieJar(session.configuration))
                    // The configuration's headers go on each request instead (see
                    // `configurationHeaders`); a copy, so the caller's session is not changed.
                    // Cookies are stored by the router (`SessionCookieJar`), not by corelibs.
                    let configuration = (session.configuration.copy() as? URLSessionConfiguration)
                        .map(SessionCookieJar.disabling)
                    configuration?.httpAdditionalHeaders = nil
                    // corelibs converts the request timeout to an integer before anything else,
                    // whatever the request's own: NaN or infinity trapped on the first request.
                    configuration?.timeoutIntervalForRequest =
                        Clamp.timeout(session.configuration.timeoutIntervalForRequest) ?? Clamp.defaultTimeout
                    configuration?.timeoutIntervalForResource =
                        Clamp.timeout(session.configuration.timeoutIntervalForResource) ?? 604_800
                    let routedSession = URLSession(
                        configuration: configuration ?? session.configuration, delegate: router, delegateQueue: nil)
                    state = .made(routedSession, router)
                    return (routedSession, router)
                }
            }
        }
    #endif

    deinit {
        #if !canImport(Darwin) && !GENTLE_APPLE_TYPECHECK
            // The session holds its delegate strongly until it is invalidated; corelibs may block
            // the call on its work queue, so it is made off the caller's (cooperative) thread.
            if case .made(let routedSession, _) = routed.current {
                SessionCall.corelibsQueue.async { routedSession.finishTasksAndInvalidate() }
            }
        #endif
    }

    /// Sends `request` with a data task of the session.
    ///
    /// - Throws: `CancellationError` when the task is cancelled (at once, without waiting for
    ///   the session), ``TransportError`` for invalid requests, connection, TLS, timeout,
    ///   limit, framing and redirect failures.
    public func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (body, response) = try await exchange(
            request, bodyLimit: ResponseLimits.effectiveBodyLimit(configured: limits.maxBodyBytes), streamBuffer: nil)
        guard case .data(let data) = body else {
            throw TransportError(.other, url: request.url, message: "A whole-body exchange returned a stream.")
        }
        return (data, response)
    }

    /// Sends `request` and returns as soon as the response head is in, with the body as an
    /// ``HTTPByteStream`` of chunks as the session delivers them.
    ///
    /// Memory stays within ``streamBufferSize`` plus a chunk. On Apple platforms the task is
    /// suspended while the consumer is that far behind (backpressure) and resumed when it
    /// catches up. corelibs' URLSession (Linux) cannot pause a transfer, so there what arrives
    /// while the consumer is that far behind is kept on disk (``streamSpillLimit``, in a file
    /// with no name) and read back in order; a consumer further behind than both ends the
    /// stream with ``TransportError/Code/responseTooLarge``. ``CurlTransport``, the Linux
    /// default, pauses the socket instead. Deadlines, redirects, validation and the head's limits are those of
    /// ``data(for:)``; the body has no size limit.
    ///
    /// - Throws: What ``data(for:)`` throws, before the head; the stream throws failures after it.
    public func stream(for request: URLRequest) async throws -> (HTTPByteStream, HTTPURLResponse) {
        let (body, response) = try await exchange(request, bodyLimit: nil, streamBuffer: streamBufferSize)
        switch body {
        case .stream(let stream):
            // Made on the delegate's queue, outside the caller's task: registered here instead.
            ObjectWatch.note(stream.source, "HTTPByteStream.Source")
            return (stream, response)
        case .data(let data): return (.single(data), response)
        }
    }

    /// One exchange through a ``SessionCall``: the whole body, or a stream with `streamBuffer`.
    private func exchange(
        _ request: URLRequest, bodyLimit: Int64?, streamBuffer: Int?
    ) async throws -> (SessionBody, HTTPURLResponse) {
        try Task.checkCancellation()
        #if canImport(Darwin) || GENTLE_APPLE_TYPECHECK
            var sent = try RequestValidator.prepared(try await RequestBodyStream.reading(request))
        #else
            var withHeaders = try await RequestBodyStream.reading(request)
            try configurationHeaders.add(to: &withHeaders)
            var sent = try RequestValidator.prepared(withHeaders)
        #endif
        // Any Double is accepted: a value corelibs could trap on is never handed to it.
        let idle =
            Clamp.timeout(request.timeoutInterval) ?? Clamp.timeout(session.configuration.timeoutIntervalForRequest)
            ?? Clamp.defaultTimeout
        #if canImport(Darwin) || GENTLE_APPLE_TYPECHECK
            sent.timeoutInterval = idle
        #else
            // corelibs keeps whole seconds of it (0.5 s would be a 1 ms timer, 1.9 s one second):
            // it gets a second more than the idle timeout, which the call's watchdog enforces.
            sent.timeoutInterval = idle.rounded(.up) + 1
        #endif
        let deadlines = [totalTimeout, Clamp.timeout(session.configuration.timeoutIntervalForResource)]
        let total = deadlines.compactMap { $0 }.min()
        let start = DispatchTime.now().uptimeNanoseconds
        var tracker: RedirectTracker? = redirectHopCheck.map { check in
            var checked = RedirectTracker(
                originalURL: sent.url, originalMethod: sent.httpMethod, maxRedirects: maxRedirects,
                capturingWitness: true)
            checked.hopCheck = check
            return checked
        }
        while true {
            // Each call gets what is left of the total deadline.
            let elapsed = TimeInterval(DispatchTime.now().uptimeNanoseconds &- start) / 1_000_000_000
            let call = SessionCall(
                request: sent, maxRedirects: maxRedirects, limits: limits, bodyLimit: bodyLimit,
                idleTimeout: idle, totalTimeout: total.map { max(0.001, $0 - elapsed) }, streamBuffer: streamBuffer,
                streamSpillLimit: streamSpillLimit, tracker: tracker, defersRedirects: redirectApprover != nil)
            let (body, response) = try await run(call, sending: sent)
            // Linux: a redirect that keeps the body, which corelibs would send without it, or any
            // redirect when an approver decides (corelibs is never left waiting for its answer).
            guard let deferred = call.deferredRedirect else { return (body, response) }
            var (next, followed) = (deferred.next, deferred.tracker)
            let previous = deferred.from
            if let redirectApprover, let task = deferred.task {
                let spent = TimeInterval(DispatchTime.now().uptimeNanoseconds &- start) / 1_000_000_000
                let approved: URLRequest?
                do {
                    approved = try await approve(
                        next, after: response, of: task, by: redirectApprover, tracker: &followed,
                        within: min(idle, total.map { max(0.001, $0 - spent) } ?? idle))
                } catch {
                    if case .stream(let stream) = body { stream.cancel() }
                    throw error
                }
                guard let approved else { return (body, response) }
                next = approved
            }
            if case .stream(let stream) = body { stream.cancel() }
            if let recorder = ExchangeRecorder.current {
                followed.noteHop(status: response.statusCode, from: previous, to: next, recorder: recorder)
            }
            try Task.checkCancellation()
            tracker = followed
            sent = next
        }
    }

    /// What `approver` answers about following `response` with `next`, or `nil` to keep the 3xx.
    ///
    /// A changed answer is checked as the caller's own request would be
    /// (``TransportError/Code/invalidRequest``), gets the configuration's headers the first
    /// request got, keeps `next`'s timeout, and goes by the rules the transport follows a
    /// `Location` by: a target that is not followable (another scheme, `https` to `http`) keeps
    /// the 3xx, credentials (headers, URL user info) are dropped for another origin, and a new
    /// target or method replaces the proposed one in `tracker` (one hop either way).
    /// ``TransportError/Code/timedOut`` when no answer came within `timeout` seconds;
    /// `CancellationError` at once when the caller's task is cancelled meanwhile.
    private func approve(
        _ next: URLRequest, after response: HTTPURLResponse, of task: URLSessionTask,
        by approver: RedirectApprover, tracker: inout RedirectTracker, within timeout: TimeInterval
    ) async throws -> URLRequest? {
        let waiting = Locked<CheckedContinuation<URLRequest?, any Error>?>(nil)
        // Whoever comes first (the answer, the timer, a cancel) resumes the caller; the others
        // find nothing to resume.
        let take = { @Sendable in
            waiting.withLock { state in
                defer { state = nil }
                return state
            }
        }
        // A task, not a dispatch timer: cancelled, it lets go of what it holds at once. Started
        // once the continuation is stored, so that even a timeout of a millisecond finds it.
        let url = response.url
        let timer = Locked<Task<Void, any Error>?>(nil)
        defer { timer.withLock { $0?.cancel() } }
        let decided = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiting.withLock { $0 = continuation }
                if Task.isCancelled {
                    take()?.resume(throwing: CancellationError())
                    return
                }
                let sleeper = Task {
                    try await Task.sleep(nanoseconds: UInt64(timeout * 1_000_000_000))
                    take()?.resume(
                        throwing: TransportError(
                            .timedOut, url: url,
                            message: "The session's delegate did not answer the redirect within \(timeout) s."))
                }
                timer.withLock { $0 = sleeper }
                approver(task, response, next) { request in take()?.resume(returning: request) }
            }
        } onCancel: {
            take()?.resume(throwing: CancellationError())
        }
        guard var approved = decided else { return nil }
        guard approved != next else { return next }
        #if !canImport(Darwin) && !GENTLE_APPLE_TYPECHECK
            // What the first request got from the configuration (a request made from scratch has none).
            try configurationHeaders.add(to: &approved)
        #endif
        // Checked as a caller's own request: valid header names and values, an `http` or
        // `https` URL with a host.
        approved = try RequestValidator.prepared(approved)
        guard var target = approved.url else {
            throw TransportError(.invalidRequest, url: nil, message: "The redirect's request has no URL.")
        }
        try RequestValidator.validateURL(target)
        approved.timeoutInterval = next.timeoutInterval
        guard RedirectTracker.isFollowable(from: response.url, to: target) else { return nil }
        if !Origin.isSameOrigin(tracker.originalURL, target), target.user != nil || target.password != nil,
            var components = URLComponents(url: target, resolvingAgainstBaseURL: false)
        {
            components.user = nil
            components.password = nil
            target = components.url ?? target
            approved.url = target
        }
        let method = (approved.httpMethod ?? "GET").uppercased()
        if target != next.url || method != (next.httpMethod ?? "GET").uppercased() {
            try tracker.replaceLastHop(to: target, method: method)
        }
        return tracker.strippingCredentials(approved, for: target)
    }

    /// Runs `call`, sending `sent` on a new task of the session.
    private func run(_ call: SessionCall, sending sent: URLRequest) async throws -> (SessionBody, HTTPURLResponse) {
        let prepared = sent
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                call.setContinuation(continuation)
                #if canImport(Darwin) || GENTLE_APPLE_TYPECHECK
                    let task = session.dataTask(with: sent)
                    task.delegate = call
                    call.start(task)
                #else
                    // corelibs creates, resumes and cancels tasks with a `sync` on its work queue,
                    // which one busy transfer can hold for seconds: never on the cooperative pool.
                    SessionCall.corelibsQueue.async { [session, routed, prepared] in
                        let sent = prepared
                        let (routedSession, router) = Self.routedSession(routed, for: session)
                        // The stored cookies go on this task's request only: the request a
                        // redirect starts from stays without them (each hop gets its own).
                        let task = routedSession.dataTask(with: router.cookies.addingCookies(to: sent))
                        router.register(call, for: task)
                        call.start(task)
                    }
                #endif
            }
        } onCancel: {
            call.cancel()
        }
    }
}

#if !canImport(Darwin) && !GENTLE_APPLE_TYPECHECK
    /// The delegate of a ``URLSessionTransport``'s routed session (Linux): hands each task's
    /// events to its ``SessionCall``, and forgets the call when the task completes.
    private final class SessionRouter: NSObject, URLSessionDataDelegate, Sendable {
        private let calls = Locked<[Int: SessionCall]>([:])
        /// The tasks whose response head reached ``urlSession(_:dataTask:didReceive:completionHandler:)``
        /// (its cookies stored there), until they complete.
        private let answered = Locked<Set<Int>>([])
        /// The 3xx whose cookies ``urlSession(_:task:willPerformHTTPRedirection:newRequest:completionHandler:)``
        /// stored, per task: declined, corelibs hands the same response over again as the
        /// task's response, and its cookies are not stored twice (another request may have
        /// stored newer ones in between). Held, not just identified: a freed 3xx's address could
        /// be the next response's.
        private let storedRedirects = Locked<[Int: HTTPURLResponse]>([:])
        let cookies: SessionCookieJar

        init(cookies: SessionCookieJar) {
            self.cookies = cookies
        }

        func register(_ call: SessionCall, for task: URLSessionTask) {
            calls.withLock { $0[task.taskIdentifier] = call }
        }

        private func call(for task: URLSessionTask) -> SessionCall? {
            calls.withLock { $0[task.taskIdentifier] }
        }

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
        ) {
            guard let call = call(for: dataTask) else {
                completionHandler(.cancel)
                return
            }
            let storedAlready = storedRedirects.withLock {
                $0.removeValue(forKey: dataTask.taskIdentifier) === response
            }
            if !storedAlready, call.request.httpShouldHandleCookies {
                cookies.store(from: response) { call.acceptsHead(response) }
            }
            answered.withLock { _ = $0.insert(dataTask.taskIdentifier) }
            call.urlSession(session, dataTask: dataTask, didReceive: response, completionHandler: completionHandler)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            call(for: dataTask)?.urlSession(session, dataTask: dataTask, didReceive: data)
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
            totalBytesExpectedToSend: Int64
        ) {
            call(for: task)?.urlSession(
                session, task: task, didSendBodyData: bytesSent, totalBytesSent: totalBytesSent,
                totalBytesExpectedToSend: totalBytesExpectedToSend)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            // A 301–308 that is not followed (no `Location`) reaches no callback above: corelibs
            // holds it as a redirect and reports it only here. Only then: stored again at the
            // end, a response's cookies could replace newer ones another request stored since.
            let wasAnswered = answered.withLock { $0.remove(task.taskIdentifier) != nil }
            let storedRedirect = storedRedirects.withLock { $0.removeValue(forKey: task.taskIdentifier) }
            let call = calls.withLock { $0.removeValue(forKey: task.taskIdentifier) }
            if !wasAnswered, let response = task.response as? HTTPURLResponse,
                (300..<400).contains(response.statusCode), storedRedirect !== response,
                task.originalRequest?.httpShouldHandleCookies != false
            {
                cookies.store(from: response) { call?.acceptsHead(response) ?? true }
            }
            call?.urlSession(session, task: task, didCompleteWithError: error)
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
        ) {
            guard let call = call(for: task) else {
                completionHandler(nil)
                return
            }
            // A request that handles no cookies (`httpShouldHandleCookies`) neither sends nor
            // stores them, on any hop.
            if call.request.httpShouldHandleCookies { cookies.store(from: response) { call.acceptsHead(response) } }
            storedRedirects.withLock { $0[task.taskIdentifier] = response }
            // The hop corelibs follows gets the stored cookies for its own URL (corelibs adds
            // none to it), after the caller's own `Cookie` where that survived the redirect.
            let callerCookie = call.request.value(forHTTPHeaderField: "Cookie")
            call.urlSession(
                session, task: task, willPerformHTTPRedirection: response, newRequest: request
            ) { [cookies] approved in
                completionHandler(approved.map { cookies.forRedirectHop($0, callerCookie: callerCookie) })
            }
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            guard let call = call(for: task) else {
                completionHandler(.rejectProtectionSpace, nil)
                return
            }
            call.urlSession(session, task: task, didReceive: challenge, completionHandler: completionHandler)
        }
    }
#endif

#if !canImport(Darwin) && !GENTLE_APPLE_TYPECHECK
    /// The routed session of a ``URLSessionTransport`` on Linux, made on first use.
    private enum RoutedSession: @unchecked Sendable {
        // @unchecked: URLSession and the router are thread-safe; the enum is kept in a `Locked`.
        /// Not needed yet.
        case notYetMade
        /// In use.
        case made(URLSession, SessionRouter)
    }
#endif
