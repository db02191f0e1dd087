import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a ``SessionCall`` hands its caller: the whole body, or (for a stream) the body as it
/// arrives.
enum SessionBody: Sendable {
    case data(Data)
    case stream(HTTPByteStream)
}

/// One exchange on a `URLSession` (for ``URLSessionTransport``): the task's delegate, the
/// continuation waiting for it, and the body collected so far (or the stream buffer it feeds);
/// ``DeadlineTimer`` enforces its deadlines. Whichever of completion, cancellation, a limit and
/// a deadline comes first ends the exchange, once.
///
/// Two modes:
/// - **whole body** (`data(for:)`): the caller is resumed with the body once it is complete;
/// - **stream** (`stream(for:)`): the caller is resumed with the head and an ``HTTPByteStream``
///   fed by a ``ChunkBuffer``. On Apple platforms the task is suspended while the consumer is
///   more than the buffer's size behind, and resumed when it catches up. corelibs (Linux) cannot
///   pause a transfer (its `suspend()` takes the transfer out of libcurl, which gives up the
///   connection, and never pauses it), so there what arrives past the buffer's size goes to a
///   ``SpillFile`` and is read back in order; past the spill limit the stream fails with
///   ``TransportError/Code/responseTooLarge``.
final class SessionCall: NSObject, URLSessionDataDelegate, DeadlineWatched, Sendable {
    private struct State {
        var continuation: CheckedContinuation<(SessionBody, HTTPURLResponse), any Error>?
        var task: URLSessionDataTask?
        var cancelled = false
        var finished = false
        var response: HTTPURLResponse?
        var body = Data()
        var lastActivity: UInt64 = 0
        var tracker: RedirectTracker
        var redirectFailure: TransportError?
        /// How many interim (1xx) responses came before the final one.
        var interimResponses = 0
        /// Stream mode, Apple platforms: the task is suspended until the consumer catches up.
        var suspended = false
        /// Stream mode, Apple platforms: the consumer caught up before the task was suspended.
        var resumeRequested = false
        /// Metrics (observed requests only): when the current hop started, when its response
        /// head arrived, and the body bytes it delivered.
        var hopStart: UInt64 = 0
        var hopFetchStart = Date()
        var responseStart: UInt64?
        var receivedBytes: Int64 = 0
        /// Metrics, Apple platforms: the system's transactions, which replace the measured ones.
        var systemTransactions: [TransactionMetrics]?
        /// The request of the current hop, once a redirect was followed.
        var currentRequest: URLRequest?
        /// Linux: the next request of a redirect that the transport follows with a call of its
        /// own: one that keeps the body, which corelibs cannot send again, and with
        /// ``defersRedirects`` every one.
        var deferredRedirect: URLRequest?
        /// Linux: the task whose 3xx ``deferredRedirect`` follows.
        var deferredRedirectTask: URLSessionTask?
        /// The redirect callback is deciding: the session waits for its answer. corelibs traps
        /// ("Received callback for HTTP redirection, but we're not waiting for it") when the
        /// task is cancelled before that answer and the answer comes after: a cancel is held
        /// back until the callback has answered.
        var redirectDecisionPending = false
        /// A cancel held back by ``redirectDecisionPending``.
        var cancelAfterRedirectDecision = false
        /// ``fail(_:fromDelegate:)`` has taken the task to cancel it (`finished` follows a moment
        /// later): a redirect callback entered now must not answer, since the cancel may reach
        /// the session first.
        var cancelIssued = false
    }

    private let state: Locked<State>
    /// The stream's buffer, in stream mode.
    private let buffer: ChunkBuffer<SessionTaskResumer>?
    /// The request as the caller (or the redirect before) gave it: on Linux without the stored
    /// cookies, which go on each task's request only (the router reads its own `Cookie` here).
    let request: URLRequest
    private let limits: ResponseLimits
    private let bodyLimit: Int64?
    private let idleTimeout: TimeInterval
    private let totalTimeout: TimeInterval?
    private let started = DispatchTime.now().uptimeNanoseconds
    /// The observed request this exchange belongs to (see ``ExchangeRecorder``), read from the
    /// caller's task; `nil` when nobody observes, and then nothing is measured.
    private let recorder: ExchangeRecorder? = ExchangeRecorder.current
    /// Linux: every redirect the rules allow ends this call with its 3xx and is followed by the
    /// transport (see ``deferredRedirect``), so that it can be approved without corelibs waiting
    /// for an answer (see ``URLSessionTransport/RedirectApprover``).
    private let defersRedirects: Bool

    /// - Parameters:
    ///   - streamBuffer: The stream mode's buffer size in bytes; `nil` for the whole-body mode.
    ///   - streamSpillLimit: Linux, stream mode: the most unread bytes kept on disk past
    ///     `streamBuffer` (corelibs cannot pause). Apple platforms suspend the task instead.
    ///   - tracker: The redirects followed so far, when this call continues an exchange (a
    ///     redirect the transport follows itself, on Linux); a new tracker by default.
    ///   - defersRedirects: Linux: every redirect the rules allow ends this call (see
    ///     ``deferredRedirect``); `false` by default.
    init(
        request: URLRequest, maxRedirects: Int, limits: ResponseLimits, bodyLimit: Int64?,
        idleTimeout: TimeInterval, totalTimeout: TimeInterval?, streamBuffer: Int? = nil,
        streamSpillLimit: Int64 = 0, tracker: RedirectTracker? = nil,
        defersRedirects: Bool = false
    ) {
        #if canImport(Darwin) || GENTLE_APPLE_TYPECHECK
            self.buffer = streamBuffer.map { ChunkBuffer(highWater: $0) }
        #else
            self.buffer = streamBuffer.map { ChunkBuffer(highWater: $0, spillLimit: streamSpillLimit) }
        #endif
        self.request = request
        self.limits = limits
        self.bodyLimit = bodyLimit
        self.idleTimeout = idleTimeout
        self.totalTimeout = totalTimeout
        self.defersRedirects = defersRedirects
        let now = DispatchTime.now().uptimeNanoseconds
        self.state = Locked(
            State(
                lastActivity: now,
                tracker: tracker
                    ?? RedirectTracker(
                        originalURL: request.url, originalMethod: request.httpMethod, maxRedirects: maxRedirects,
                        capturingWitness: true),
                hopStart: now))
        super.init()
        ObjectWatch.note(self, "SessionCall")
    }

    /// The next request of a redirect the transport follows itself (Linux: one that keeps the
    /// body, or any with ``defersRedirects``), the request of the hop that ended with its 3xx,
    /// the redirects followed so far and the task, once the call ended with that 3xx; `nil`
    /// otherwise.
    var deferredRedirect: (next: URLRequest, from: URLRequest, tracker: RedirectTracker, task: URLSessionTask?)? {
        state.withLock { state in
            state.deferredRedirect.map {
                ($0, state.currentRequest ?? request, state.tracker, state.deferredRedirectTask)
            }
        }
    }

    func setContinuation(_ continuation: CheckedContinuation<(SessionBody, HTTPURLResponse), any Error>) {
        state.withLock { $0.continuation = continuation }
    }

    func start(_ task: URLSessionDataTask) {
        buffer?.attach(SessionTaskResumer(call: self))
        let cancelled = state.withLock { state -> Bool in
            state.task = task
            return state.cancelled
        }
        if cancelled {
            complete(.failure(CancellationError()))
            task.cancel()
            return
        }
        let first = deadlines(lastActivity: state.withLock { $0.lastActivity })
        DeadlineTimer.shared.add(self, deadline: min(first.idle, first.total))
        // A call that ended meanwhile (cancelled between the check above and here) may have
        // left the timer before it joined: it leaves now (the timer would drop it at its
        // deadline anyway, since it holds calls weakly and asks before acting).
        // Not resumed either: on Linux `fail` cancels the task asynchronously, and a resume
        // that won that race sent the request after its caller had cancelled.
        if state.withLock({ $0.finished }) {
            DeadlineTimer.shared.remove(self)
            return
        }
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
        let task = state.withLock { state -> URLSessionDataTask? in
            // The redirect callback cancels the task itself once it has answered.
            if state.redirectDecisionPending {
                state.cancelAfterRedirectDecision = true
                return nil
            }
            // Decided under the same lock as the redirect callback's entry: it either sees this
            // and does not answer, or set its flag first and was seen above.
            state.cancelIssued = true
            return state.task
        }
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

    /// Ends the exchange: resumes the caller if it still waits (for a stream, if the head had not
    /// come yet), ends the stream with the error or at the body's end, and lets go of the task.
    private func complete(_ result: Result<(SessionBody, HTTPURLResponse), any Error>) {
        let (continuation, metrics) = state.withLock {
            state -> (CheckedContinuation<(SessionBody, HTTPURLResponse), any Error>?, [TransactionMetrics]) in
            let metrics = state.finished || recorder == nil ? [] : finalMetrics(state)
            state.finished = true
            defer {
                state.continuation = nil
                state.task = nil  // the session holds the task, and the task holds us as its delegate
                state.body = Data()
            }
            return (state.continuation, metrics)
        }
        if let recorder {
            #if canImport(Darwin) || GENTLE_APPLE_TYPECHECK
                for (hop, transaction) in metrics.enumerated() { recorder.add(transaction, hop: hop) }
            #else
                for transaction in metrics { recorder.add(transaction) }
            #endif
        }
        DeadlineTimer.shared.remove(self)
        continuation?.resume(with: result)
        if let buffer {
            switch result {
            case .success: buffer.finish(nil)
            case .failure(let error): buffer.finish(error)
            }
        }
    }

    /// Stream mode: hands the caller the head and the stream, and keeps the exchange going.
    private func deliverHead(_ response: HTTPURLResponse, buffer: ChunkBuffer<SessionTaskResumer>) {
        let stream = HTTPByteStream(
            next: { try await buffer.next() },
            cancel: { [weak self] in
                self?.cancel()
                // What was buffered (up to the spill limit on disk) goes now, even when the
                // exchange had ended already (a fast server, a consumer that lagged, then left).
                buffer.finish(CancellationError())
            })
        let continuation = state.withLock { state in
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: (.stream(stream), response))
    }

    // MARK: Deadlines

    /// The idle deadline (`lastActivity` + the idle timeout) and the total one, in uptime
    /// nanoseconds (`UInt64.max` for no total deadline).
    private func deadlines(lastActivity: UInt64) -> (idle: UInt64, total: UInt64) {
        (
            lastActivity &+ UInt64(idleTimeout * 1_000_000_000),
            totalTimeout.map { started &+ UInt64($0 * 1_000_000_000) } ?? UInt64.max
        )
    }

    /// ``DeadlineTimer``: fails the exchange when its total deadline, or its idle deadline with
    /// no activity since, has passed; otherwise returns the next deadline (later than before
    /// when bytes came meanwhile). `nil` once the exchange has ended.
    func checkDeadlines(now: UInt64) -> UInt64? {
        let (lastActivity, finished) = state.withLock { state -> (UInt64, Bool) in
            // A task suspended for a slow consumer is not idle.
            if state.suspended { state.lastActivity = now }
            return (state.lastActivity, state.finished)
        }
        if finished { return nil }
        let (idleDeadline, totalDeadline) = deadlines(lastActivity: lastActivity)
        if now >= totalDeadline {
            fail(
                TransportError(
                    .timedOut, url: request.url,
                    message: "The exchange took longer than its total timeout of \(totalTimeout ?? 0) s."))
            return nil
        }
        if now >= idleDeadline {
            fail(
                TransportError(
                    .timedOut, url: request.url, message: "No data for \(idleTimeout) s (the request's timeout)."))
            return nil
        }
        return min(idleDeadline, totalDeadline)
    }

    /// Stream mode: the consumer has caught up with a suspended task (Apple platforms).
    ///
    /// The buffer may ask before the task is suspended (the consumer caught up while the chunk
    /// that filled the buffer was being taken): the request is then remembered, and the task is
    /// not suspended at all.
    func resumeTask() {
        state.withLock { state in
            guard !state.finished else { return }
            guard state.suspended else {
                state.resumeRequested = true
                return
            }
            state.suspended = false
            state.lastActivity = DispatchTime.now().uptimeNanoseconds
            state.task?.resume()
        }
    }

    private func touch() {
        state.withLock { $0.lastActivity = DispatchTime.now().uptimeNanoseconds }
    }

    /// Request body bytes went out: the exchange is not idle. Without it, an upload that took
    /// longer than the request's timeout to a server that answers after the whole body (a large
    /// file, a slow link) ended as `.timedOut` while its bytes were still going out
    /// (`CurlTransport` counts bytes sent as activity too).
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        touch()
    }

    // MARK: URLSessionDataDelegate

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        touch()
        guard let http = response as? HTTPURLResponse else {
            fail(
                TransportError(.badResponse, url: request.url, message: TransportError.notHTTPResponseMessage),
                fromDelegate: true)
            completionHandler(.cancel)
            return
        }
        // An interim response (100 Continue, 103 Early Hints), which corelibs hands over as a
        // response: the final one follows (CurlTransport waits for it too), at most
        // `ResponseLimits.maxInterimResponses`.
        if (100..<200).contains(http.statusCode), http.statusCode != 101,
            let count = state.withLock({ state -> Int? in
                guard state.redirectFailure == nil else { return nil }
                state.interimResponses += 1
                return state.interimResponses
            })
        {
            guard count > ResponseLimits.maxInterimResponses else {
                completionHandler(.allow)
                return
            }
            fail(ResponseLimits.tooManyInterimResponses(url: request.url), fromDelegate: true)
            completionHandler(.cancel)
            return
        }
        // A redirect that was not followed (a loop, too many hops) fails the call here, before a
        // stream's caller gets the 3xx as its response (CurlTransport throws before it returns).
        if let error = state.withLock({ $0.redirectFailure }) ?? check(http) {
            fail(error, fromDelegate: true)
            completionHandler(.cancel)
            return
        }
        state.withLock { state in
            state.response = http
            if recorder != nil { state.responseStart = DispatchTime.now().uptimeNanoseconds }
        }
        completionHandler(.allow)
        if let buffer { deliverHead(http, buffer: buffer) }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        if recorder != nil { state.withLock { $0.receivedBytes += Int64(data.count) } }
        if let buffer {
            touch()
            switch buffer.append(data) {
            case .taken:
                return
            case .overflow:
                fail(
                    TransportError(
                        .responseTooLarge, url: request.url,
                        message:
                            "The stream's consumer fell further behind than \(buffer.highWater) bytes in memory and \(buffer.spillLimit ?? 0) on disk can hold, or the disk refused the bytes; URLSession on Linux cannot pause a transfer (CurlTransport can)."
                    ), fromDelegate: true)
                return
            case .full:
                break
            }
            #if canImport(Darwin) || GENTLE_APPLE_TYPECHECK
                // Resumed by the buffer (``resumeTask()``) once the consumer has caught up; the
                // idle timeout does not run meanwhile. Suspending and resuming both happen under
                // the state lock, so a consumer that catches up while this chunk is being taken
                // cannot resume the task before it is suspended (it would then stay suspended).
                // Suspended once: calls to `suspend()` and `resume()` are counted, and the buffer
                // resumes once, so a chunk already on the delegate queue when the task was
                // suspended (it fills the buffer again) must not suspend it a second time.
                state.withLock { state in
                    guard !state.finished, !state.suspended else { return }
                    if state.resumeRequested {
                        state.resumeRequested = false
                        return
                    }
                    state.suspended = true
                    dataTask.suspend()
                }
            #else
                // Not reached: a Linux buffer spills to disk instead of filling up.
                fail(
                    TransportError(
                        .responseTooLarge, url: request.url,
                        message: "The stream's consumer fell \(buffer.highWater) bytes behind."),
                    fromDelegate: true)
            #endif
            return
        }
        let overLimit = state.withLock { state -> Bool in
            state.lastActivity = DispatchTime.now().uptimeNanoseconds
            if state.finished { return false }
            if let bodyLimit, Int64(state.body.count) + Int64(data.count) > bodyLimit { return true }
            state.body.append(data)
            return false
        }
        if overLimit { fail(tooLarge(), fromDelegate: true) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        // corelibs tells the delegate nothing about a 3xx it does not try to follow (no
        // `Location`): it ends with no response delivered, but the task has it. (A 3xx declined
        // in the redirect callback is delivered as a response by the corelibs of Swift 6.3; an
        // older one delivered nothing there either.) The 3xx is the response, as on CurlTransport (it was
        // `.badResponse`, "no response"); its body is not there to return.
        if error == nil, state.withLock({ $0.response == nil && $0.redirectFailure == nil }),
            let http = task.response as? HTTPURLResponse
        {
            if let failure = check(http) {
                complete(.failure(failure))
                return
            }
            state.withLock { $0.response = http }
            if let buffer { deliverHead(http, buffer: buffer) }
        }
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
        complete(.success((.data(body), response)))
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        touch()
        let ended = state.withLock { state -> Bool in
            if state.finished || state.cancelIssued { return true }
            state.redirectDecisionPending = true
            return false
        }
        if ended {
            // Ended already (cancelled, a deadline): its cancel is on its way to the task, and an
            // answer after it traps corelibs. No answer; the cancel ends the task.
            task.cancel()
            return
        }
        #if canImport(Darwin) || GENTLE_APPLE_TYPECHECK
            // A copy of the session's configuration, read outside the lock.
            let configuration = session.configuration
        #endif
        // The head of a 3xx to follow is checked as a final one is (field count and bytes,
        // framing): neither corelibs nor Apple's URLSession hands it to `didReceive response`,
        // so a 302 with a header flood, or with `Transfer-Encoding` and `Content-Length`, was
        // followed here where CurlTransport, which checks every hop, failed it.
        let headError = check(response)
        let hop = state.withLock { state -> (next: URLRequest, previous: URLRequest)? in
            guard state.tracker.maxRedirects > 0 else { return nil }
            if let headError {
                state.redirectFailure = headError
                return nil
            }
            // The request of the hop that ended with this 3xx (not the original one: after a 302
            // turned a POST into a GET, a later 307 keeps the GET).
            let previous = state.currentRequest ?? request
            // The next request by the rule CurlTransport follows: the `Location` resolved as RFC
            // 3986 says against the response's URL (corelibs resolves `next` and `?p=2` against
            // the root, and keeps the user info on a `//other-host` reference), the method and
            // body rules of RFC 9110, and no credential to another origin. `nil` for a
            // `Location` no transport sends (not http(s), no host, port 0: see
            // `RedirectTracker.isFollowable`): the 3xx is the response, as on CurlTransport.
            guard let candidate = state.tracker.nextRequest(after: response, for: previous),
                let url = candidate.url
            else {
                return nil
            }
            // A hop the transport's check refuses (a pinned host over plain http) is refused
            // before any other rule can end the redirect with its 3xx instead; on Apple platforms
            // the URL the system would follow is checked too.
            if let check = state.tracker.hopCheck {
                #if canImport(Darwin) || GENTLE_APPLE_TYPECHECK
                    let targets = [url, newRequest.url].compactMap { $0 }
                #else
                    let targets = [url]
                #endif
                if let refusal = targets.lazy.compactMap(check).first {
                    state.redirectFailure = refusal
                    return nil
                }
            }
            #if canImport(Darwin) || GENTLE_APPLE_TYPECHECK
                // The system adds the configuration's own headers to the next hop again: a
                // credential among them must not go to another origin.
                if RedirectTracker.sessionCredentialWouldCross(
                    to: url, from: state.tracker.originalURL, configuration: configuration,
                    listed: state.tracker.credentialHeaders)
                {
                    return nil
                }
            #endif
            do throws(TransportError) {
                try state.tracker.follow(to: url, method: candidate.httpMethod)
            } catch {
                state.redirectFailure = error
                return nil
            }
            #if canImport(Darwin) || GENTLE_APPLE_TYPECHECK
                // The system resolves the `Location` and keeps a 307's body itself.
                let next = state.tracker.strippingCredentials(newRequest, for: newRequest.url)
            #else
                let next = candidate
                // corelibs sends a hop that keeps the method (307, 308, a PUT on 301) with an
                // empty body, whatever request is returned here: the 3xx ends this call, and the
                // transport sends the next request with a call of its own.
                if defersRedirects || next.httpBody.map({ !$0.isEmpty }) == true {
                    state.deferredRedirect = next
                    state.deferredRedirectTask = task
                    return nil
                }
            #endif
            state.currentRequest = next
            return (next, previous)
        }
        // A call that ended while this decided follows nothing, and records no hop it never made.
        let endedWhileDeciding = state.withLock { $0.cancelAfterRedirectDecision }
        if !endedWhileDeciding, let recorder, let hop {
            noteHop(response, from: hop.previous, to: hop.next, recorder: recorder)
        }
        completionHandler(endedWhileDeciding ? nil : hop?.next)
        // Only now, the answer on its way to the session, may a cancel reach the task: held back
        // until here, it is sent after the answer.
        let cancelNow = state.withLock { state -> Bool in
            state.redirectDecisionPending = false
            return state.cancelAfterRedirectDecision
        }
        if cancelNow { task.cancel() }
    }

    // MARK: Metrics

    /// A followed redirect: the hop that ended with `response` (measured, on Linux), then the
    /// step. On Apple platforms the system's metrics give the hops when the task completes.
    private func noteHop(
        _ response: HTTPURLResponse, from previous: URLRequest, to next: URLRequest, recorder: ExchangeRecorder
    ) {
        let (hop, tracker) = state.withLock { state -> (TransactionMetrics, RedirectTracker) in
            var hop = measured(state, statusCode: response.statusCode, url: response.url ?? request.url, sent: previous)
            hop.responseStart = nil  // corelibs reports no head for a redirect it follows
            state.hopStart = DispatchTime.now().uptimeNanoseconds
            state.hopFetchStart = Date()
            state.responseStart = nil
            state.receivedBytes = 0
            return (hop, state.tracker)
        }
        #if !canImport(Darwin) && !GENTLE_APPLE_TYPECHECK
            recorder.add(hop)
        #endif
        tracker.noteHop(status: response.statusCode, from: previous, to: next, recorder: recorder)
    }

    /// The figures this call measured for the current hop, ending now; `sent` is the hop's
    /// request when it is no longer the current one (a redirect already recorded).
    private func measured(_ state: State, statusCode: Int?, url: URL?, sent: URLRequest? = nil) -> TransactionMetrics {
        let now = DispatchTime.now().uptimeNanoseconds
        func offset(_ time: UInt64?) -> TimeInterval? {
            time.map { TimeInterval($0 &- state.hopStart) / 1_000_000_000 }
        }
        let current = sent ?? state.currentRequest ?? request
        let body = current.httpBody.map { Int64($0.count) }
        return TransactionMetrics(
            method: (current.httpMethod ?? "GET").uppercased(), url: Redactor.url(url), statusCode: statusCode,
            fetchStart: state.hopFetchStart, responseStart: offset(state.responseStart), responseEnd: offset(now),
            requestBodyBytes: body, responseBodyDecodedBytes: statusCode == nil ? nil : state.receivedBytes,
            source: .transport)
    }

    /// The transactions to report when the exchange ends: the system's (Apple platforms), or the
    /// last hop as measured.
    private func finalMetrics(_ state: State) -> [TransactionMetrics] {
        #if canImport(Darwin) || GENTLE_APPLE_TYPECHECK
            return state.systemTransactions ?? []
        #else
            return [measured(state, statusCode: state.response?.statusCode, url: state.response?.url ?? request.url)]
        #endif
    }

    /// The system's metrics (Apple platforms; corelibs never calls this). They come before the
    /// task completes, and are reported with the exchange's end; should they come after it,
    /// they are reported at once.
    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        guard let recorder else { return }
        let transactions = metrics.transactionMetrics.compactMap { TransactionMetrics(system: $0) }
        let late = state.withLock { state -> Bool in
            guard !state.finished else { return true }
            state.systemTransactions = transactions
            return false
        }
        if late {
            for (hop, transaction) in transactions.enumerated() { recorder.add(transaction, hop: hop) }
        }
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
                complete(.success((.data(body), response)))
            }
            completionHandler(.cancelAuthenticationChallenge, nil)
        }
    #endif

    // MARK: Checks

    /// Whether `response`'s head passes the checks this call makes of it (``check(_:)``): the
    /// cookie jar stores nothing from a head the call then fails (at most 256 fields by default,
    /// but a head over the limits had its cookies stored before).
    func acceptsHead(_ response: URLResponse) -> Bool {
        guard let http = response as? HTTPURLResponse else { return true }
        return check(http) == nil
    }

    /// The response head's framing and size, checked before the body is accepted.
    private func check(_ response: HTTPURLResponse) -> TransportError? {
        if response.statusCode < 200 {
            return TransportError(
                .badResponse, url: request.url,
                message: "The server answered \(response.statusCode) as a final response (a 101 switches to a "
                    + "protocol that was not asked for).")
        }
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

/// How a ``SessionCall``'s stream buffer resumes the task the call suspended (Apple platforms):
/// the call, weakly, so the buffer cannot keep it alive. On Linux the task is never suspended
/// (see ``SessionCall``), so this does nothing there.
struct SessionTaskResumer: TransferResuming {
    weak var call: SessionCall?

    func resume() {
        call?.resumeTask()
    }
}
