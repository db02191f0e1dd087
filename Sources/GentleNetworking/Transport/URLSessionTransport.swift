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
    #if !canImport(Darwin) && !GENTLE_APPLE_TYPECHECK
        /// corelibs calls a task's own delegate for redirects only, never for data, so on Linux
        /// the exchanges run on a session made from `session`'s configuration whose delegate
        /// routes each task's events to its call. `nil` when `session` has a delegate of its
        /// own (it is then used as it is, with the deadlines enforced and the body limit
        /// checked once the body is complete).
        ///
        /// Made on first use, off the caller's thread (see ``SessionCall/corelibsQueue``).
        private let routed: Locked<RoutedSession>
    #endif

    /// Creates a transport.
    ///
    /// - Parameters:
    ///   - session: The session to send with; `URLSession.shared` by default.
    ///   - maxRedirects: The redirect limit; 10 by default. Negative values count as 0.
    ///   - limits: `ResponseLimits()` by default.
    ///   - totalTimeout: `nil` by default. NaN, zero and negative values mean none; infinite
    ///     and huge values are capped (never trapped on).
    public init(
        session: URLSession = .shared, maxRedirects: Int = 10, limits: ResponseLimits = ResponseLimits(),
        totalTimeout: TimeInterval? = nil
    ) {
        self.session = session
        self.maxRedirects = max(0, maxRedirects)
        self.limits = limits
        self.totalTimeout = totalTimeout.flatMap(Clamp.timeout)
        #if !canImport(Darwin) && !GENTLE_APPLE_TYPECHECK
            self.routed = Locked(session.delegate == nil ? .notYetMade : .notUsed)
        #endif
    }

    #if !canImport(Darwin) && !GENTLE_APPLE_TYPECHECK
        /// The routed session, made the first time it is needed (corelibs may block creating it).
        private static func routedSession(
            _ routed: Locked<RoutedSession>, for session: URLSession
        ) -> (URLSession, SessionRouter)? {
            routed.withLock { state in
                switch state {
                case .notUsed:
                    return nil
                case .made(let routedSession, let router):
                    return (routedSession, router)
                case .notYetMade:
                    let router = SessionRouter()
                    let routedSession = URLSession(
                        configuration: session.configuration, delegate: router, delegateQueue: nil)
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
        try Task.checkCancellation()
        try RequestValidator.validate(request)
        var sent = request
        // Any Double is accepted: a value corelibs could trap on is never handed to it.
        let idle =
            Clamp.timeout(request.timeoutInterval) ?? Clamp.timeout(session.configuration.timeoutIntervalForRequest)
            ?? 60
        sent.timeoutInterval = idle
        let prepared = sent
        let deadlines = [totalTimeout, Clamp.timeout(session.configuration.timeoutIntervalForResource)]
        let call = SessionCall(
            request: sent, maxRedirects: maxRedirects, limits: limits,
            bodyLimit: ResponseLimits.effectiveBodyLimit(configured: limits.maxBodyBytes),
            idleTimeout: idle, totalTimeout: deadlines.compactMap { $0 }.min())
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
                        let task: URLSessionDataTask
                        if let (routedSession, router) = Self.routedSession(routed, for: session) {
                            task = routedSession.dataTask(with: sent)
                            router.register(call, for: task)
                        } else {
                            task = session.dataTask(with: sent) { data, response, error in
                                call.completed(data: data, response: response, error: error)
                            }
                            task.delegate = call  // redirects only
                        }
                        call.start(task)
                    }
                #endif
            }
        } onCancel: {
            call.cancel()
        }
    }
}

/// One exchange on a `URLSession`: the task's delegate, the continuation waiting for it, the
/// body collected so far and the watchdog that enforces the deadlines. Whichever of
/// completion, cancellation, a limit and a deadline comes first resumes the caller, once.
private final class SessionCall: NSObject, URLSessionDataDelegate, Sendable {
    private struct State {
        var continuation: CheckedContinuation<(Data, HTTPURLResponse), any Error>?
        var task: URLSessionDataTask?
        var cancelled = false
        var finished = false
        var response: HTTPURLResponse?
        var body = Data()
        var lastActivity: UInt64 = 0
        var watchdog: Task<Void, Never>?
        var tracker: RedirectTracker
        var redirectFailure: TransportError?
    }

    private let state: Locked<State>
    private let request: URLRequest
    private let limits: ResponseLimits
    private let bodyLimit: Int64?
    private let idleTimeout: TimeInterval
    private let totalTimeout: TimeInterval?
    private let started = DispatchTime.now().uptimeNanoseconds

    init(
        request: URLRequest, maxRedirects: Int, limits: ResponseLimits, bodyLimit: Int64?,
        idleTimeout: TimeInterval, totalTimeout: TimeInterval?
    ) {
        self.request = request
        self.limits = limits
        self.bodyLimit = bodyLimit
        self.idleTimeout = idleTimeout
        self.totalTimeout = totalTimeout
        self.state = Locked(
            State(
                lastActivity: DispatchTime.now().uptimeNanoseconds,
                tracker: RedirectTracker(originalURL: request.url, maxRedirects: maxRedirects)))
    }

    func setContinuation(_ continuation: CheckedContinuation<(Data, HTTPURLResponse), any Error>) {
        state.withLock { $0.continuation = continuation }
    }

    func start(_ task: URLSessionDataTask) {
        let cancelled = state.withLock { state -> Bool in
            state.task = task
            return state.cancelled
        }
        if cancelled {
            complete(.failure(CancellationError()))
            task.cancel()
            return
        }
        let watchdog = Task { [weak self] in
            guard let self else { return }
            await self.watch()
        }
        state.withLock { $0.watchdog = watchdog }
        task.resume()
    }

    func cancel() {
        state.withLock { $0.cancelled = true }
        fail(CancellationError())
    }

    /// Where corelibs tasks are created, resumed and cancelled (Linux): off the cooperative pool.
    static let corelibsQueue = DispatchQueue(label: "gentle.urlsession", attributes: .concurrent)

    /// Ends the exchange with `error`: the caller is resumed at once and the session task
    /// cancelled (on Linux off the caller's thread, since corelibs may block the cancel).
    ///
    /// `fromDelegate`: called from a session delegate callback, where corelibs takes the cancel
    /// at once (from another thread it can wait behind the very transfer it is meant to stop).
    private func fail(_ error: any Error, fromDelegate: Bool = false) {
        let task = state.withLock { $0.task }
        complete(.failure(error))
        guard let task else { return }
        #if canImport(Darwin) || GENTLE_APPLE_TYPECHECK
            task.cancel()
        #else
            if fromDelegate {
                task.cancel()
            } else {
                Self.corelibsQueue.async { task.cancel() }
            }
        #endif
    }

    private func complete(_ result: Result<(Data, HTTPURLResponse), any Error>) {
        let (continuation, watchdog) = state.withLock {
            state -> (CheckedContinuation<(Data, HTTPURLResponse), any Error>?, Task<Void, Never>?) in
            state.finished = true
            defer {
                state.continuation = nil
                state.watchdog = nil
                state.task = nil  // the session holds the task, and the task holds us as its delegate
                state.body = Data()
            }
            return (state.continuation, state.watchdog)
        }
        watchdog?.cancel()
        continuation?.resume(with: result)
    }

    // MARK: Deadlines

    /// Sleeps until the earlier deadline (idle or total), then fails the exchange if it passed
    /// without activity; otherwise sleeps again.
    private func watch() async {
        while !Task.isCancelled {
            let now = DispatchTime.now().uptimeNanoseconds
            let (lastActivity, finished) = state.withLock { ($0.lastActivity, $0.finished) }
            if finished { return }
            let idleDeadline = lastActivity &+ UInt64(idleTimeout * 1_000_000_000)
            let totalDeadline = totalTimeout.map { started &+ UInt64($0 * 1_000_000_000) } ?? UInt64.max
            if now >= totalDeadline {
                fail(
                    TransportError(
                        .timedOut, url: request.url,
                        message: "The exchange took longer than its total timeout of \(totalTimeout ?? 0) s."))
                return
            }
            if now >= idleDeadline {
                fail(
                    TransportError(
                        .timedOut, url: request.url, message: "No data for \(idleTimeout) s (the request's timeout)."))
                return
            }
            let wait = min(idleDeadline, totalDeadline) - now
            try? await Task.sleep(nanoseconds: min(wait, 1_000_000_000_000) + 1_000_000)
        }
    }

    private func touch() {
        state.withLock { $0.lastActivity = DispatchTime.now().uptimeNanoseconds }
    }

    // MARK: URLSessionDataDelegate

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        touch()
        guard let http = response as? HTTPURLResponse else {
            fail(
                TransportError(.badResponse, url: request.url, message: "The response is not an HTTP response."),
                fromDelegate: true)
            completionHandler(.cancel)
            return
        }
        if let error = check(http) {
            fail(error, fromDelegate: true)
            completionHandler(.cancel)
            return
        }
        state.withLock { $0.response = http }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let overLimit = state.withLock { state -> Bool in
            state.lastActivity = DispatchTime.now().uptimeNanoseconds
            if state.finished { return false }
            if let bodyLimit, Int64(state.body.count) + Int64(data.count) > bodyLimit { return true }
            state.body.append(data)
            return false
        }
        if overLimit { fail(tooLarge(), fromDelegate: true) }
    }

    /// The completion handler's path (Linux, a session with its own delegate): the same
    /// checks, after the fact.
    func completed(data: Data?, response: URLResponse?, error: (any Error)?) {
        if error == nil, let http = response as? HTTPURLResponse {
            if let failure = check(http) {
                complete(.failure(failure))
                return
            }
            let body = data ?? Data()
            if let bodyLimit, Int64(body.count) > bodyLimit {
                complete(.failure(tooLarge()))
                return
            }
            state.withLock {
                $0.response = http
                $0.body = body
            }
        }
        finish(error: error)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        finish(error: error)
    }

    private func tooLarge() -> TransportError {
        TransportError(
            .responseTooLarge, url: request.url,
            message: "The response body exceeds the limit of \(bodyLimit ?? 0) bytes; the connection was closed.")
    }

    private func finish(error: (any Error)?) {
        let (response, body, redirectFailure) = state.withLock { ($0.response, $0.body, $0.redirectFailure) }
        if let redirectFailure {
            complete(.failure(redirectFailure))
            return
        }
        if let error {
            if let urlError = error as? URLError {
                complete(.failure(TransportError.map(urlError, url: request.url)))
            } else {
                complete(
                    .failure(
                        TransportError(
                            .other, url: request.url, message: error.localizedDescription, underlyingError: error)))
            }
            return
        }
        guard let response else {
            complete(.failure(TransportError(.badResponse, url: request.url, message: "The server sent no response.")))
            return
        }
        complete(.success((body, response)))
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        touch()
        let next = state.withLock { state -> URLRequest? in
            guard state.tracker.maxRedirects > 0 else { return nil }
            // Not http(s), as the server wrote it or as corelibs resolved it: the 3xx is the
            // response, as on CurlTransport.
            guard RedirectTracker.httpTarget(of: response, for: task.originalRequest) != nil,
                let url = newRequest.url, (try? RequestValidator.validateURL(url)) != nil
            else {
                return nil
            }
            do throws(TransportError) {
                try state.tracker.follow(to: newRequest.url)
            } catch {
                state.redirectFailure = error
                return nil
            }
            return state.tracker.strippingCredentials(newRequest, for: newRequest.url)
        }
        completionHandler(next)
    }

    #if !canImport(Darwin) && !GENTLE_APPLE_TYPECHECK
        /// corelibs answers a 401 with `WWW-Authenticate` by asking for credentials and, with no
        /// delegate to answer, never completes. We send credentials as headers only, so the
        /// challenge is declined and the 401 is delivered as the response. (On Apple platforms
        /// the system does this itself, and the session delegate keeps TLS challenges.)
        func urlSession(
            _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            touch()
            // corelibs has no server-trust challenges (libcurl verifies TLS itself): every
            // challenge here is HTTP authentication, raised after the 401 (or 407) and its whole
            // body arrived. That is the response: deliver it, then let corelibs cancel the task
            // (`.performDefaultHandling` and `.useCredential` trap in corelibs; no answer hangs).
            let (response, body) = state.withLock { ($0.response, $0.body) }
            if let response {
                complete(.success((body, response)))
            }
            completionHandler(.cancelAuthenticationChallenge, nil)
        }
    #endif

    // MARK: Checks

    /// The response head's framing and size, checked before the body is accepted.
    private func check(_ response: HTTPURLResponse) -> TransportError? {
        var count = 0
        var bytes = 0
        var contentLength: String?
        var hasTransferEncoding = false
        for (key, value) in response.allHeaderFields {
            let name = String(describing: key)
            let text = String(describing: value)
            count += 1
            bytes += name.utf8.count + text.utf8.count + 4
            switch name.lowercased() {
            case "content-length": contentLength = text
            case "transfer-encoding": hasTransferEncoding = true
            default: break
            }
        }
        if count > limits.maxHeaderCount {
            return TransportError(
                .responseTooLarge, url: request.url,
                message: "The response has more than \(limits.maxHeaderCount) header fields.")
        }
        if bytes > limits.maxHeaderBytes {
            return TransportError(
                .responseTooLarge, url: request.url,
                message: "The response headers exceed the limit of \(limits.maxHeaderBytes) bytes.")
        }
        guard let contentLength else { return nil }
        if hasTransferEncoding {
            return TransportError(
                .badResponse, url: request.url,
                message: "The response has both Transfer-Encoding and Content-Length (RFC 9112 §6.3).")
        }
        guard let length = ContentLength.parse(contentLength) else {
            return TransportError(
                .badResponse, url: request.url, message: "The response has a malformed or conflicting Content-Length.")
        }
        let method = (request.httpMethod ?? "GET").uppercased()
        if method != "HEAD", response.statusCode != 204, response.statusCode != 304, let bodyLimit, length > bodyLimit {
            return TransportError(
                .responseTooLarge, url: request.url,
                message:
                    "The response declares \(length) body bytes, above the limit of \(bodyLimit); nothing was read.")
        }
        return nil
    }
}

#if !canImport(Darwin) && !GENTLE_APPLE_TYPECHECK
    /// The delegate of a ``URLSessionTransport``'s routed session (Linux): hands each task's
    /// events to its ``SessionCall``, and forgets the call when the task completes.
    private final class SessionRouter: NSObject, URLSessionDataDelegate, Sendable {
        private let calls = Locked<[Int: SessionCall]>([:])

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
            call.urlSession(session, dataTask: dataTask, didReceive: response, completionHandler: completionHandler)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            call(for: dataTask)?.urlSession(session, dataTask: dataTask, didReceive: data)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            let call = calls.withLock { $0.removeValue(forKey: task.taskIdentifier) }
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
            call.urlSession(
                session, task: task, willPerformHTTPRedirection: response, newRequest: request,
                completionHandler: completionHandler)
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
    /// Whether a ``URLSessionTransport`` on Linux sends through its own routed session.
    private enum RoutedSession: @unchecked Sendable {
        // @unchecked: URLSession and the router are thread-safe; the enum is kept in a `Locked`.
        /// The given session has its own delegate: it is used as it is.
        case notUsed
        /// Not needed yet.
        case notYetMade
        /// In use.
        case made(URLSession, SessionRouter)
    }
#endif
