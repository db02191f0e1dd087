import Foundation
import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Called with a request's result, on the main queue.
///
/// Handler types are plain closures, as in Y-Network, not `@Sendable` ones: a handler may
/// mutate the caller's captured variables, in Swift 5 and Swift 6 language modes. Each handler
/// is called on the queue its API names, one call at a time.
public typealias APICompletion<Response: Decodable> = (Result<Response, any Error>) -> Void

/// A fraction of a transfer, in 0…1.
public typealias Percentage = Double

/// Called with a transfer's progress, on the main queue; the last call reports `1.0`.
public typealias ProgressHandler = (Percentage) -> Void

/// Called with a finished download, off the main queue: the temporary file (move it before
/// returning: it is removed afterwards) or the error.
public typealias FileDownloadHandler = (Result<URL, any Error>) -> Void

/// Called, on the main queue, with the response body of a successful upload.
public typealias FileUploadHandler = (Data) -> Void

/// Called when a transfer is cancelled; kept from Y-Network, where it was for a `Progress`'s
/// cancellation handler. ``NetworkManager`` itself does not take one: cancelling a
/// ``Cancelable`` fails the transfer's handler with `URLError(.cancelled)`, as Y-Network's tasks did.
public typealias CancellationHandler = () -> Void

/// A raw exchange's outcome, as Y-Network declared it for engines: the body, the response, or
/// the error. Our ``NetworkEngine`` is `async` and does not use it.
public typealias NetworkEngineCompletion = (Data?, URLResponse?, (any Error)?) -> Void

/// `URLSessionTask` is a ``Cancelable``, as in Y-Network.
extension URLSessionTask: Cancelable {}

/// Sends ``NetworkRequest``s: builds each URL request, sends it through the configured
/// ``NetworkEngine``, refreshes credentials on a 401 through the ``SessionManager``, and parses
/// the response.
///
/// It works unconfigured (`NetworkManager()` uses `NetworkManagerConfiguration()`); call
/// ``configure(with:sessionManager:)`` for a base path, headers, a timeout, or another engine.
///
/// Responses: 2xx is parsed by the request's ``ResponseContentType``; 401 is
/// ``NetworkError/unauthenticated`` (after one refresh and retry, with a session manager); any
/// other status is ``HttpError`` with the status, headers and body.
///
/// Subclassing: an `open` class, as in Y-Network (``submit(_:)``, ``submit(_:completion:)``,
/// the transfers and ``peekTaskResult(request:data:response:error:)`` can be overridden). It is
/// `Sendable`, behind locks; a subclass inherits that and should restate it
/// (`final class Spy: NetworkManager, @unchecked Sendable`), protecting any mutable state it
/// adds (Swift warns until it is restated; it compiles either way, in Swift 5 and 6 modes).
///
/// An `NSObject` and a `URLSession` delegate, as in Y-Network, so it can be passed where either
/// is expected (see `NetworkManager+URLSessionDelegate.swift`). Unlike Y-Network it does not
/// make itself the configuration's session delegate: that would take requests off the default
/// transport.
open class NetworkManager: NSObject, @unchecked Sendable {
    // @unchecked: all mutable state is in `state` and `refresh`, behind their locks.
    private struct State {
        var configuration: NetworkManagerConfiguration?
        var sessionManager: (any SessionManager)?
        /// The engine of the latest configuration, when refresh `number` set it (from inside
        /// itself) and nothing configured the manager since: the retries of the requests that
        /// waited for that refresh go through it.
        var engineFromRefresh: (number: Int, engine: NetworkEngine)?
    }

    private let state = Locked(State())
    private let refresh = Locked(SessionRefreshState(policy: SessionRefreshPolicy()))

    /// Creates a manager that works without configuration.
    public override init() {
        super.init()
    }

    // swift-format-ignore: NeverUseImplicitlyUnwrappedOptionals
    /// The current configuration (the default one until ``configure(with:sessionManager:)``).
    ///
    /// Never `nil`. Implicitly unwrapped, as Y-Network declares it, so that its optional
    /// chaining (`manager.configuration?.networkEngine`) compiles too.
    public var configuration: NetworkManagerConfiguration! { currentConfiguration }

    /// The current configuration, for this module's own use.
    var currentConfiguration: NetworkManagerConfiguration {
        state.withLock { state in
            if let configuration = state.configuration { return configuration }
            let configuration = NetworkManagerConfiguration()
            state.configuration = configuration
            return configuration
        }
    }

    /// The session manager, or `nil` when none was configured.
    public var sessionManager: (any SessionManager)? {
        state.withLock { $0.sessionManager }
    }

    /// Sets the configuration and, optionally, the session manager, and configures the engine.
    ///
    /// Called while a session refresh is in flight, it cancels that refresh (it belongs to the old
    /// session), and the requests waiting for it fail with ``NetworkError/unauthenticated``.
    /// Called by the refresh itself (inside ``SessionManager/refresh(networkManager:)``, while
    /// that refresh is the one in flight), it leaves the refresh running: the waiting requests
    /// are retried when it succeeds, through the engine it configured, and the new
    /// configuration's ``NetworkManagerConfiguration/sessionRefreshPolicy`` applies from the next
    /// `configure` made outside a refresh.
    public func configure(with configuration: NetworkManagerConfiguration, sessionManager: (any SessionManager)? = nil)
    {
        let insideRefresh = ownRefreshInFlight
        state.withLock { state in
            state.configuration = configuration
            state.sessionManager = sessionManager
            state.engineFromRefresh = insideRefresh.map { ($0, configuration.networkEngine) }
        }
        // Called by this manager's own refresh (a session manager that stores a new configuration
        // or session while it refreshes, then returns `true`): that refresh goes on, and the
        // requests waiting for it are retried when it ends, as in Y-Network, where `configure`
        // never touched a refresh. They failed at once, and the refresh was cancelled. The refresh
        // bookkeeping stays as it is, policy included: a refresh that reconfigures on every 401
        // must not reset the loop guard's count (a server refusing every new token would then get
        // a refresh per 401). A policy set this way applies from the next `configure` made outside
        // a refresh.
        // Only while that refresh is the one in flight: a task it started carries the task-locals
        // on after it ended, and a refresh that timed out may still run; their `configure` is one
        // from outside, which cancels whatever refresh runs by then.
        if insideRefresh != nil {
            configuration.networkEngine.configure(with: configuration.engineConfiguration)
            return
        }
        // A refresh in flight belongs to the old session: it is cancelled, and every request
        // waiting for it fails as after a failed refresh (none waits forever). Refresh numbers go
        // on from the old state's, so the old refresh, ending late, cannot end a new one.
        let (waiters, task) = refresh.withLock {
            state -> ([CheckedContinuation<Bool, any Error>], Task<Void, Never>?) in
            let old = state
            state = SessionRefreshState(policy: configuration.sessionRefreshPolicy)
            state.refreshNumber = old.refreshNumber
            state.nextWaiterID = old.nextWaiterID
            // A request that chose to wait for the old refresh but has not registered yet
            // finds it ended (failed) rather than waiting for a refresh nobody will finish.
            state.outcomes = old.outcomes
            if let active = old.activeRefresh { state.outcomes[active] = false }
            return (old.waiters.values.flatMap(\.values), old.refreshTask)
        }
        task?.cancel()
        for waiter in waiters { waiter.resume(returning: false) }
        configuration.networkEngine.configure(with: configuration.engineConfiguration)
    }

    /// Sends `request` and parses the response as `Response`.
    ///
    /// - Throws: ``NetworkError``, ``HttpError``, `URLError(.cancelled)` for a cancelled task, or the transport's error
    ///   when it is neither a TLS nor a connectivity failure (a timeout, for example).
    open func submit<Response: Decodable>(_ request: NetworkRequest) async throws -> Response {
        let configuration = currentConfiguration
        let (data, response, sent) = try await exchange(request, configuration: configuration)
        return try parse(data, response: response, request: request, configuration: configuration, sent: sent)
    }

    /// Sends `request` and calls `completion` with the parsed response on the main queue.
    ///
    /// Returns nothing, as in Y-Network, so a subclass written for Y-Network overrides it
    /// unchanged; ``submitCancelable(_:completion:)`` also returns a handle that cancels.
    open func submit<Response: Decodable>(_ request: NetworkRequest, completion: @escaping APICompletion<Response>) {
        submitCancelable(request, completion: completion)
    }

    /// ``submit(_:completion:)``, returning a handle that cancels the request (the completion
    /// then gets `URLError(.cancelled)`).
    @discardableResult
    public func submitCancelable<Response: Decodable>(
        _ request: NetworkRequest, completion: @escaping APICompletion<Response>
    ) -> Cancelable {
        // Built here, in the generic context, and handed to the task type-erased: the task and
        // the main-queue hop then capture no `Response` metatype, so any `Decodable` will do.
        let run: () async -> Void = {
            let result: Result<Response, any Error>
            do {
                result = .success(try await self.submit(request))
            } catch {
                result = .failure(error)
            }
            let delivery = Handoff { completion(result) }
            await onMain { delivery.value() }
        }
        let operation = Handoff(run)
        return TransferHandle(Task { await operation.value() })
    }

    // MARK: - Transfers (see NetworkManager+Transfers.swift)

    /// Downloads the response body of `request` to a temporary file.
    ///
    /// - Parameters:
    ///   - progress: Called on the main queue with the fraction received; `nil` by default.
    ///   - completionHandler: Called once, off the main queue, with the temporary file (move it
    ///     before returning: it is removed afterwards) or the error: ``NetworkError`` (401 is
    ///     ``NetworkError/unauthenticated``), ``HttpError`` with the body for other statuses, or
    ///     `URLError(.cancelled)`.
    /// - Returns: A handle that cancels the download. It is never `nil` (the optional is kept
    ///   for source compatibility; Y-Network returned `nil` when unconfigured, this manager works
    ///   unconfigured): a request that cannot be built fails in the handler.
    @discardableResult
    open func submitBackgroundDownload(
        _ request: NetworkRequest, progress: ProgressHandler? = nil, completionHandler: @escaping FileDownloadHandler
    ) -> Cancelable? {
        download(request, progress: progress, completionHandler: completionHandler)
    }

    /// Uploads the body of `request` from a temporary file (a multipart body is written there
    /// without loading its file parts into memory), then calls `completionHandler` with the
    /// response body on the main queue.
    ///
    /// - Parameters:
    ///   - progress: Called on the main queue with the fraction sent; `nil` by default.
    ///   - completionHandler: Called with the response body whatever the status, as in Y-Network
    ///     (which handed it the body of any final response, so an error message can be read):
    ///     a 2xx's body, or the body of any other status (``HttpError/data``) when it has one.
    ///     Not called when the upload fails without a response body (a transport error, a
    ///     cancellation, a 401 the session could not refresh); use
    ///     ``submitBackgroundUpload(_:progress:resultHandler:)`` to see every outcome.
    /// - Returns: A handle that cancels the upload; never `nil`.
    @discardableResult
    open func submitBackgroundUpload(
        _ request: NetworkRequest, progress: ProgressHandler? = nil, completionHandler: FileUploadHandler? = nil
    ) -> Cancelable? {
        let completionHandler = Handoff(completionHandler)
        return transfer(request, file: nil, progress: progress) { result in
            switch result {
            case .success(let data): completionHandler.value?(data)
            case .failure(let error as HttpError) where !error.data.isEmpty: completionHandler.value?(error.data)
            case .failure: break
            }
        }
    }

    /// Uploads the body of `request` from a temporary file, then calls `resultHandler` on the
    /// main queue with the response body or the error.
    ///
    /// Disfavoured: a trailing closure written for Y-Network's
    /// ``submitBackgroundUpload(_:progress:completionHandler:)`` (`{ data in … }`) goes there,
    /// as it did; name `resultHandler:` to come here.
    ///
    /// - Returns: A handle that cancels the upload; never `nil`.
    @_disfavoredOverload
    @discardableResult
    open func submitBackgroundUpload(
        _ request: NetworkRequest, progress: ProgressHandler? = nil,
        resultHandler: @escaping (Result<Data, any Error>) -> Void
    ) -> Cancelable? {
        transfer(request, file: nil, progress: progress, resultHandler: resultHandler)
    }

    /// Uploads the file at `file` as the body of `request` (its own ``NetworkRequest/body`` is
    /// ignored), streaming it from disk, then calls `resultHandler` on the main queue with the
    /// response body or the error.
    ///
    /// - Returns: A handle that cancels the upload.
    @discardableResult
    open func submitBackgroundUpload(
        _ request: NetworkRequest, fromFile file: URL, progress: ProgressHandler? = nil,
        resultHandler: @escaping (Result<Data, any Error>) -> Void
    ) -> Cancelable {
        transfer(request, file: file, progress: progress, resultHandler: resultHandler)
    }

    /// A hook called with every exchange's outcome before it is parsed (data and response) or
    /// thrown (error); it does nothing by default. Override it to log or record.
    open func peekTaskResult(request: NetworkRequest, data: Data?, response: URLResponse?, error: (any Error)?) {}

    // MARK: - URLSession delegate callbacks (conformances in NetworkManager+URLSessionDelegate.swift)

    // Declared in the class, not in the extension that adds the conformances, so that a subclass
    // can override them on every platform (Swift cannot override extension members without the
    // Objective-C runtime). Each does nothing: the manager's own transfers report through their
    // handlers. They are called for tasks of a session whose delegate is the manager, such as
    // those `URLNetworkEngine.submitBackgroundDownload(_:)` starts when the configuration's
    // `sessionDelegate` is this manager.

    /// A download task of a session delegated to this manager finished writing `location` (the
    /// session removes the file when this returns). Does nothing; override to use the file.
    open func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL
    ) {}

    /// A download task of a session delegated to this manager wrote `bytesWritten` more bytes.
    /// Does nothing; override to observe progress.
    open func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
    ) {}

    /// A task of a session delegated to this manager sent `bytesSent` more body bytes. Does
    /// nothing; override to observe upload progress.
    open func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {}

    /// A task of a session delegated to this manager ended, with `error` or `nil` on success.
    /// Does nothing; override to observe completions.
    open func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {}

    /// A data (or upload) task of a session delegated to this manager received body bytes. Does
    /// nothing; override to collect an upload's response.
    open func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {}

    // MARK: - Sending

    /// What was sent last for a request: scrubbed from a decoding error's text.
    struct SentRequest {
        /// The request as it went out, with the session's credentials.
        let request: URLRequest
        /// The request as built, before the session applied its credentials.
        let built: URLRequest

        /// The header names the session added: secrets whatever their names. Worked out only
        /// when a decoding error needs them, never on a request that succeeds.
        var sessionHeaders: [String] { NetworkManager.credentialHeaderNames(of: request, appliedTo: built) }
    }

    /// Sends `request` (refreshing once on a 401) and returns the final body and response, and
    /// what was sent last.
    func exchange(
        _ request: NetworkRequest, configuration: NetworkManagerConfiguration
    ) async throws -> (Data, URLResponse, SentRequest?) {
        do {
            let built = try RequestAssembler(configuration: configuration).build(request)
            defer { built.removeTemporaryFile() }
            var lastSent: URLRequest?
            let (data, response) = try await withSession(request, built.request, configuration: configuration) {
                urlRequest, engine in
                lastSent = urlRequest
                return try await self.send(urlRequest, body: built, engine: engine)
            }
            peekTaskResult(request: request, data: data, response: response, error: nil)
            return (data, response, lastSent.map { SentRequest(request: $0, built: built.request) })
        } catch {
            let mapped = NetworkError.mapping(error)
            peekTaskResult(request: request, data: nil, response: nil, error: mapped)
            throw mapped
        }
    }

    private func send(
        _ request: URLRequest, body: RequestAssembler.Built, engine: NetworkEngine
    ) async throws -> (Data, URLResponse) {
        if let file = body.bodyFile {
            return try await engine.upload(request, fromFile: file, progress: nil)
        }
        return try await engine.submit(request)
    }

    /// Sends `urlRequest` with the session's credentials (when `request` uses the session and
    /// goes to the configuration's base path's origin: a request's own base path elsewhere, an
    /// S3 bucket's, gets them no more than the configuration's credential headers); on a 401, refreshes them once (shared with every concurrent
    /// 401, through the core's `RefreshCoordinatorState` and its loop guard) and sends once more.
    /// `configuration` is the one `urlRequest` was built with: its base path decides the origin
    /// the credentials may go to, whatever the manager is configured with meanwhile. `send` gets
    /// the engine to send through: `configuration`'s, and for the retry after a refresh the one
    /// that refresh configured, if any and nothing has configured the manager since.
    func withSession<Value>(
        _ request: NetworkRequest, _ urlRequest: URLRequest, configuration: NetworkManagerConfiguration,
        send: (URLRequest, NetworkEngine) async throws -> (Value, URLResponse)
    ) async throws -> (Value, URLResponse) {
        let engine = configuration.networkEngine
        guard request.usesSession, let sessionManager = self.sessionManager,
            Self.sessionCovers(urlRequest.url, base: configuration.basePath)
        else { return try await send(urlRequest, engine) }
        // Read before the credentials are applied: a refresh that ends in between counts as one
        // this request may not have seen. A failed one then costs at worst a refresh; one that
        // handed out these same credentials again makes a 401 to them a retry, not a refresh.
        let epoch = refresh.withLock { $0.finishedRefreshes }
        var first = urlRequest
        sessionManager.apply(&first)
        let sent = Self.credentialFingerprint(of: first, appliedTo: urlRequest)
        // Whatever headers the session adds are credentials: no redirect to another origin
        // carries them, whatever their names.
        let ((value, response), witness) = try await RequestWitness.watching(first) {
            try await Origin.withCredentialHeaders(
                Self.credentialHeaderNames(of: first, appliedTo: urlRequest)
            ) { try await send(first, engine) }
        }
        // A 401 from another origin (a redirect there, which carried no session credential)
        // says nothing about the session: returned as it is, no refresh. Nor does one at the end
        // of a chain that dropped the credentials on its way and came back (`A → B → A`).
        guard let http = response as? HTTPURLResponse, http.statusCode == 401,
            http.url == nil || Origin.isSameOrigin(urlRequest.url, http.url), !witness.droppedCredentials
        else { return (value, response) }
        var now = urlRequest
        sessionManager.apply(&now)
        let current = Self.credentialFingerprint(of: now, appliedTo: urlRequest)
        // The retry goes through the engine the refresh it waited for installed, if that refresh
        // configured the manager and nothing has since (as in Y-Network, which read the engine
        // again); otherwise through the one of the first try: an engine configured from outside
        // belongs to another configuration, whose transports (a token, a cache of their own) must
        // not see a request built for this one.
        let retryEngine: NetworkEngine
        switch try await refreshed(
            sent: sent, current: current, sentAtEpoch: epoch, original: urlRequest, sessionManager: sessionManager)
        {
        case .giveUp:
            return (value, response)
        case .retry:
            retryEngine = engine
        case .retryAfter(let number):
            retryEngine =
                state.withLock { $0.engineFromRefresh?.number == number ? $0.engineFromRefresh?.engine : nil }
                ?? engine
        }
        // Applied again: a refresh may have changed the credentials since `retry` was prepared.
        var refreshedRequest = urlRequest
        sessionManager.apply(&refreshedRequest)
        return try await Origin.withCredentialHeaders(
            Self.credentialHeaderNames(of: refreshedRequest, appliedTo: urlRequest)
        ) { try await send(refreshedRequest, retryEngine) }
    }

    /// The number of this manager's refresh that the current task runs, while that refresh is
    /// the one in flight; `nil` elsewhere (also in a task the refresh started, which keeps the
    /// task-locals after the refresh ended, and in a refresh that timed out).
    private var ownRefreshInFlight: Int? {
        guard Self.refreshing == ObjectIdentifier(self), let number = Self.refreshNumber else { return nil }
        return refresh.withLock { $0.activeRefresh == number } ? number : nil
    }

    /// Whether the request that got a 401 with credential `sent` should be sent again: after the
    /// shared refresh succeeded, or at once when its credential was already replaced. Not
    /// (``RefreshVerdict/giveUp``) when the refresh failed or timed out, or the loop guard refused
    /// another one.
    /// `original` is the request before the session's credentials were applied.
    ///
    /// A 401 to a request the refresh itself sends (``SessionManager/refresh(networkManager:)``
    /// submitting a request that uses the session, its default) is the refresh's failure: it
    /// joined the refresh in flight, so the refresh waited for itself until the refresh timeout
    /// (30 s by default), with every caller behind it.
    private func refreshed(
        sent: String, current: String, sentAtEpoch epoch: Int, original: URLRequest, sessionManager: any SessionManager
    ) async throws -> RefreshVerdict {
        if ownRefreshInFlight != nil { return .giveUp }
        let policy = refresh.withLock { $0.policy }
        let now = policy.now()
        enum Step {
            case settled(Bool)
            case start(Int)
            case join(Int)
        }
        let step: Step = refresh.withLock { state in
            // A refresh from this credential failed after the request was sent: it covered this
            // request too, so it fails without another refresh.
            if let failedAt = state.failures[sent], failedAt > epoch {
                return .settled(false)
            }
            // `sent` is what the session manager applied, never the caller's own: credentials the
            // app replaced while the request was in flight join a refresh in flight or are
            // retried with the current ones, as before `notIssued` existed.
            switch state.coordinator.unauthorized(
                sent: sent, current: current, sentAtEpoch: epoch, now: now, vouchedFor: true)
            {
            case .retryWithCurrentCredentials: return .settled(true)
            case .notIssued: return .settled(false)  // not returned for a vouched-for credential
            case .refuseLimitExceeded: return .settled(false)
            case .joinRefresh: return .join(state.refreshNumber)
            case .startRefresh:
                state.refreshNumber += 1
                state.activeRefresh = state.refreshNumber
                return .start(state.refreshNumber)
            }
        }
        switch step {
        case .settled(let outcome):
            return outcome ? .retry : .giveUp
        case .start(let number):
            startRefresh(
                number: number, from: sent, original: original, sessionManager: sessionManager, timeout: policy.timeout)
            return try await waitForRefresh(number: number) ? .retryAfter(refresh: number) : .giveUp
        case .join(let number):
            return try await waitForRefresh(number: number) ? .retryAfter(refresh: number) : .giveUp
        }
    }

    /// What a request that got a 401 does (see ``refreshed(sent:current:sentAtEpoch:original:sessionManager:)``).
    private enum RefreshVerdict {
        /// Returns the 401.
        case giveUp
        /// Is sent again at once, with the current credentials.
        case retry
        /// Is sent again after refresh `refresh` succeeded.
        case retryAfter(refresh: Int)
    }

    /// The manager whose refresh the current task runs (see ``refreshed(sent:current:sentAtEpoch:original:sessionManager:)``).
    @TaskLocal static var refreshing: ObjectIdentifier?

    /// The number of the refresh the current task runs (with ``refreshing``).
    @TaskLocal static var refreshNumber: Int?

    /// Runs refresh `number` in its own task (cancelling the request that started it does not
    /// abort a refresh others wait for), and fails it for every waiter after `timeout` seconds
    /// (then cancels it and ignores its result). `original` (without credentials) has the
    /// session's credentials applied after the refresh, to learn the fingerprint of the new ones.
    private func startRefresh(
        number: Int, from sent: String, original: URLRequest, sessionManager: any SessionManager,
        timeout: TimeInterval
    ) {
        let timer = Task { [weak self] in
            do {
                try await Task.sleep(nanoseconds: UInt64(max(0, min(timeout, 86_400)) * 1_000_000_000))
            } catch {
                return
            }
            // The refresh's task is taken out of the state as the refresh ends, and cancelled.
            self?.finishRefresh(number: number, from: sent, renewed: nil)?.cancel()
        }
        let refreshing = Task { [weak self] in
            guard let self else { return }
            let succeeded = await Self.$refreshing.withValue(ObjectIdentifier(self)) {
                await Self.$refreshNumber.withValue(number) {
                    await sessionManager.refresh(networkManager: self)
                }
            }
            var renewed = original
            if succeeded { sessionManager.apply(&renewed) }
            self.finishRefresh(
                number: number, from: sent,
                renewed: succeeded ? Self.credentialFingerprint(of: renewed, appliedTo: original) : nil)
            timer.cancel()
        }
        let ended = refresh.withLock { state -> Bool in
            guard state.activeRefresh == number else { return true }
            state.refreshTask = refreshing
            return false
        }
        if ended { refreshing.cancel() }
    }

    /// Ends refresh `number` and wakes its waiters: it succeeded when `renewed` (the fingerprint
    /// of the credentials it produced) is not `nil`. Returns the refresh's task when this call
    /// ended it (for the timer to cancel); `nil` when it had already ended (it timed out, it
    /// finished before its timeout, or the manager was configured again), or when its task is
    /// not stored yet (``startRefresh`` then cancels it itself).
    @discardableResult
    private func finishRefresh(number: Int, from sent: String, renewed: String?) -> Task<Void, Never>? {
        let succeeded = renewed != nil
        let ended = refresh.withLock { state -> ([CheckedContinuation<Bool, any Error>], Task<Void, Never>?)? in
            guard state.activeRefresh == number else { return nil }
            let task = state.refreshTask
            state.activeRefresh = nil
            state.refreshTask = nil
            if let renewed {
                state.coordinator.refreshSucceeded(newCredential: renewed)
                // The session works again: a 401 to a request sent before an earlier refresh
                // failed is now settled by retrying with the current credentials (the
                // coordinator's decision), not failed for that older refresh.
                state.failures.removeAll()
            } else {
                state.coordinator.refreshFailed()
            }
            if !succeeded {
                state.failures[sent] = state.finishedRefreshes
                if state.failures.count > 64, let oldest = state.failures.min(by: { $0.value < $1.value }) {
                    state.failures.removeValue(forKey: oldest.key)
                }
            }
            state.outcomes[number] = succeeded
            state.outcomes = state.outcomes.filter { $0.key > number - 8 }
            return (state.waiters.removeValue(forKey: number).map { Array($0.values) } ?? [], task)
        }
        guard let (waiters, task) = ended else { return nil }
        for waiter in waiters { waiter.resume(returning: succeeded) }
        return task
    }

    /// How many requests wait for a refresh now: for tests.
    var refreshWaiterCount: Int {
        refresh.withLock { state in state.waiters.values.reduce(0) { $0 + $1.count } }
    }

    /// Waits for refresh `number` to end; cancelling the caller stops its wait at once.
    private func waitForRefresh(number: Int) async throws -> Bool {
        let id = refresh.withLock { state -> Int in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        let refresh = self.refresh
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
                let immediate = refresh.withLock { state -> Result<Bool, any Error>? in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if let outcome = state.outcomes[number] { return .success(outcome) }
                    state.waiters[number, default: [:]][id] = continuation
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let waiter = refresh.withLock { $0.waiters[number]?.removeValue(forKey: id) }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Whether the session's credentials go with a request to `url`: when it has the origin
    /// (scheme, host, port) of `base`, the request's base path or the configuration's. An
    /// absolute path to another origin (a CDN, a presigned upload URL, plain `http` to the same
    /// host) is sent without them. With no base, or one that is not an absolute URL, every
    /// request is covered, as in Y-Network.
    static func sessionCovers(_ url: URL?, base: PathRepresentable?) -> Bool {
        guard let base, let baseURL = URL(string: base.pathValue), baseURL.host != nil else { return true }
        return Origin.isSameOrigin(baseURL, url)
    }

    /// The names of the header fields `sessionManager.apply` added to or changed in `original`.
    static func credentialHeaderNames(of applied: URLRequest, appliedTo original: URLRequest) -> [String] {
        (applied.allHTTPHeaderFields ?? [:]).compactMap { name, value in
            original.value(forHTTPHeaderField: name) == value ? nil : name
        }
    }

    /// A SHA-256 of the header fields `sessionManager.apply` added to or changed in `original`
    /// (names lowercased, sorted): identifies the credential without keeping it.
    static func credentialFingerprint(of applied: URLRequest, appliedTo original: URLRequest) -> String {
        let lines = (applied.allHTTPHeaderFields ?? [:]).compactMap { name, value -> String? in
            original.value(forHTTPHeaderField: name) == value ? nil : name.lowercased() + ": " + value
        }
        return SHA256Digest.hexHash(lines.sorted().joined(separator: "\n"))
    }

    // MARK: - Parsing

    func parse<Response: Decodable>(
        _ data: Data, response: URLResponse, request: NetworkRequest, configuration: NetworkManagerConfiguration,
        sent: SentRequest? = nil
    ) throws -> Response {
        try Self.check(response, body: data)
        if let empty = EmptyNetworkResponse() as? Response, request.responseType == .none || data.isEmpty {
            return empty
        }
        let factory = request.parserFactory ?? configuration.parserFactory
        switch request.responseType {
        case .none:
            throw NetworkError.unexpectedResponse(type: .none)
        case .binary:
            if let bytes = data as? Response { return bytes }
            guard let decoder = factory.decoder(for: .binary) else { throw NetworkError.noDecoder }
            return try decode(Response.self, data, decoder, sent: sent)
        case .JSON:
            guard !data.isEmpty else { throw NetworkError.noData }
            guard let decoder = factory.decoder(for: .JSON) else { throw NetworkError.noDecoder }
            return try decode(Response.self, data, decoder, sent: sent)
        }
    }

    /// Decodes `data`; a `DecodingError` is wrapped as one of the same case and coding path whose
    /// text is cut to 512 bytes and scrubbed of `sent`'s credential values and of every header
    /// the session added (`DecodingFailure.sanitized`): the decoder quotes the server's values
    /// (a 50 MB enum value made a 50 MB error; a token the server echoed reached the app's logs).
    private func decode<Response: Decodable>(
        _ type: Response.Type, _ data: Data, _ decoder: DataDecoder, sent: SentRequest?
    ) throws -> Response {
        do {
            return try decoder.decode(type, from: data)
        } catch {
            throw NetworkError.deserialization(
                DecodingFailure.sanitized(error, sentWith: sent?.request, alsoHeaders: sent?.sessionHeaders ?? []))
        }
    }
}
