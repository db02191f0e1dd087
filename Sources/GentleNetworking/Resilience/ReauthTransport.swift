import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Refreshes an expired credential on a 401 and retries the request once, with one refresh
/// shared by every concurrent 401.
///
/// ```swift
/// let service = HTTPNetworkService(
///     transport: ReauthTransport(
///         inner: RetryTransport(),
///         authService: keyChainAuthService,
///         refreshToken: {
///             // Call your refresh endpoint, then save the new token via the auth service.
///         }
///     )
/// )
/// ```
///
/// On a 401 for a request that carried a credential (the auth service's header):
/// - if that credential is not one of the auth service's (neither the current one, nor one a
///   refresh of this transport replaced or handed out, nor the one ``HTTPNetworkService`` added
///   to this request), the 401 is returned as it is: it may be the caller's own (another API's
///   Basic credentials), which ours must not replace;
/// - if that credential was already replaced (by an earlier refresh, or by the app after the
///   service added it), the request is retried with the current one, without a new refresh;
/// - if a refresh is in flight, it waits for it; otherwise it starts one;
/// - then it re-authorizes the request through the auth service and retries it exactly once.
///   A second 401 is returned as it is.
///
/// A 401 for a request without credentials is returned as it is. When the refresh fails, every
/// waiter throws ``TransportError`` ``TransportError/Code/authenticationFailed`` with the 401
/// response and the refresh error (``ReauthError``) attached; ``HTTPNetworkService`` throws it
/// as ``NetworkError`` `.httpStatusError(.unauthorized)` with the same attachments. More than ``ReauthPolicy/maxRefreshes`` refreshes
/// within ``ReauthPolicy/window`` fail the same way instead of refreshing again.
///
/// A refresh that has not finished after ``ReauthPolicy/refreshTimeout`` (30 s by default) fails
/// every waiter the same way, with ``ReauthError/Code/refreshTimedOut``; the refresh task is
/// cancelled, and the next 401 may start a new refresh. Whatever the timed-out refresh does
/// later is ignored by the coordinator (a token it still saves is picked up by later requests).
public final class ReauthTransport: HTTPTransportProtocol {
    /// The transport requests go through.
    public var inner: any HTTPTransportProtocol { innerExchange.transport }
    /// The inner transport, with what it can do looked up once (it holds `inner`).
    let innerExchange: InnerTransport
    /// The auth service that re-authorizes retried requests.
    public let authService: any AuthServiceProtocol
    /// The refresh: obtain a new credential and save it through ``authService``.
    public let refreshToken: @Sendable () async throws -> Void
    /// The loop guard and clock.
    public let policy: ReauthPolicy

    struct Shared {
        var state: RefreshCoordinatorState
        /// How many refreshes were started, by any transport sharing this: the last one's number.
        var refreshNumber = 0
        /// Callers waiting for refresh number `key`, by waiter id.
        var waiters: [Int: [Int: CheckedContinuation<Void, any Error>]] = [:]
        /// Outcomes of the most recent refreshes, by refresh number.
        var outcomes: [Int: Result<Void, ReauthError>] = [:]
        var nextWaiterID = 0
        /// The number of the refresh in flight: only it may finish, once (by completing or by
        /// timing out).
        var inFlight: Int?
        /// The last refresh's failure when it was transient (``ReauthError/isTransient``); `nil`
        /// after a success or another failure. A loop guard that trips right after such a
        /// failure is transient too: the user is not signed out for an endpoint that was down.
        var lastTransientFailure: ReauthError?
    }

    /// The refresh bookkeeping this transport shares with every other `ReauthTransport` over
    /// the same auth service object (see ``init(inner:authService:policy:refreshToken:)``).
    let coordinator: ReauthCoordinator
    private var shared: Locked<Shared> { coordinator.shared }
    /// How many refreshes this transport started.
    private let started = Locked(0)

    /// The coordinator whose refresh the current task runs, if any.
    @TaskLocal private static var refreshing: ObjectIdentifier?

    /// Creates a re-authenticating transport.
    ///
    /// Every `ReauthTransport` over the same auth service *object* (a class instance, such as
    /// ``InMemoryAuthService``) shares one refresh at a time,
    /// one loop guard and one record of retired credentials: two stacks over one service (one
    /// for the API, one for uploads) that both get a 401 refresh once, not twice (with rotating
    /// refresh tokens, the second refresh would present a token the first had spent, and the
    /// session would be revoked). The first transport made for a service sets the loop guard's
    /// limits; each refresh runs the closure, and the timeout, of the transport whose 401
    /// started it. ``SystemKeyChainAuthService`` values with the same store, service and account
    /// share one too. Any other auth service that is a value (a struct) cannot be told apart
    /// from a copy and is not shared: give two stacks one `ReauthTransport`, or an auth service
    /// that is a class.
    ///
    /// - Parameters:
    ///   - inner: A ``RetryTransport`` with the default policy over the platform's default
    ///     transport by default, as in the original GentleNetworking.
    ///   - authService: The service whose credential is refreshed; `SystemKeyChainAuthService()`
    ///     by default, as in the original GentleNetworking (`ReauthTransport { … }` compiles).
    ///   - policy: `ReauthPolicy()` by default: at most 3 refreshes per 60 s.
    ///   - refreshToken: Obtains and saves a new credential. Runs at most once at a time, across
    ///     every transport sharing the auth service.
    public init(
        inner: any HTTPTransportProtocol = RetryTransport(),
        authService: any AuthServiceProtocol = SystemKeyChainAuthService(),
        policy: ReauthPolicy = ReauthPolicy(),
        refreshToken: @escaping @Sendable () async throws -> Void
    ) {
        self.innerExchange = InnerTransport(inner)
        self.authService = authService
        self.refreshToken = refreshToken
        self.policy = policy
        self.coordinator = ReauthCoordinator.shared(for: authService, policy: policy)
    }

    /// How many refreshes this transport has started.
    public var refreshCount: Int { started.current }

    /// Sends `request`; on a 401 refreshes (shared) and retries once. A 401 from another
    /// origin than the request's (after a redirect) is returned as it is, without a refresh. A
    /// body stream is read into memory first (at most ``RequestBodyStream/maxBytes``), so the
    /// retry sends it whole.
    ///
    /// The auth service's ``AuthServiceProtocol/headerField`` counts as a credential header:
    /// a redirect to another origin drops it, as it drops `Authorization`.
    ///
    /// - Throws: What the inner transport throws; ``TransportError``
    ///   ``TransportError/Code/authenticationFailed`` when the refresh fails, times out or the
    ///   loop guard trips; ``NetworkError`` `.authorizationFailed` when the auth service cannot
    ///   read its credential; `CancellationError` when cancelled.
    public func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        // The auth service's header is a credential: no redirect to another origin carries it.
        try await Origin.withCredentialHeader(authService.headerField) {
            try await send(request, exchange: { try await inner.data(for: $0) }, drain: { ($0, $0) })
        }
    }

    /// `data(for:)` with the inner transport's response built only for a 401 (or when the caller
    /// asks for it).
    func deferredData(for request: URLRequest) async throws -> (Data, DeferredResponse) {
        try await Origin.withCredentialHeader(authService.headerField) {
            try await send(request, exchange: { try await innerExchange.deferredExchange($0) }, drain: { ($0, $0) })
        }
    }

    /// Establishes a stream of `request`, handling a 401 before the body as ``data(for:)`` does:
    /// the 401's body (at most 64 KiB) is read and that stream ended, the credentials are
    /// refreshed, and the stream is requested once more.
    public func stream(for request: URLRequest) async throws -> (HTTPByteStream, HTTPURLResponse) {
        try await Origin.withCredentialHeader(authService.headerField) {
            try await send(
                request, exchange: { try await inner.stream(for: $0) },
                drain: { stream in
                    defer { stream.cancel() }
                    // What was read stands in for the stream, should the 401 be returned.
                    let data = (try? await stream.collect(maxBytes: 64 << 10)) ?? Data()
                    return (data, HTTPByteStream.single(data))
                })
        }
    }

    /// The 401 handling of every entry point; `drain` reads a 401's body (and ends it), and
    /// returns it with what stands in for the body if the 401 is returned after all (a stream
    /// over the bytes read, for a stream: the drained one was returned, its body lost and
    /// throwing `CancellationError`). Only a 401 is built (a deferred response stays unbuilt
    /// otherwise).
    private func send<Body, Response: ExchangeResponse>(
        _ request: URLRequest, exchange: (URLRequest) async throws -> (Body, Response),
        drain: (Body) async -> (data: Data, replacement: Body)
    ) async throws -> (Body, Response) {
        // A body stream can be read once: read into memory first (as every transport does, at
        // most `RequestBodyStream.maxBytes`), it is sent whole on the retry after a refresh too.
        // Replayed as a stream, the retry read a closed stream, and corelibs traps on that.
        let request = request.httpBodyStream == nil ? request : try await RequestBodyStream.reading(request)
        // Read before sending: a refresh that ends after this and hands out the credential this
        // request carries again (a renewed session) settles its 401 by a retry.
        let epoch = shared.withLock { $0.state.finishedRefreshes }
        let ((body, exchanged), witness) = try await RequestWitness.watching(request) { try await exchange(request) }
        guard exchanged.statusCode == 401,
            let sent = request.value(forHTTPHeaderField: authService.headerField), !sent.isEmpty
        else {
            return (body, exchanged)
        }
        let response = try exchanged.httpResponse()
        // A 401 from another origin (a redirect took the request there, without its credential)
        // says nothing about the credential: it is returned as it is and refreshes nothing.
        // Otherwise a host behind an open redirect could spend the refresh loop guard, and the
        // API's own expiry would then fail with `refreshLimitExceeded`. The same for a chain that
        // came back (`A → B → A`): the credential was dropped on the way and the 401's URL is
        // the API's again.
        guard Origin.isSameOrigin(request.url, response.url ?? request.url), !witness.droppedCredentials else {
            return (body, exchanged)
        }
        // A request the refresh itself sends (its endpoint on this same stack) that gets a 401
        // is the refresh's failure: waiting for the refresh in flight would wait for itself until
        // the refresh timeout.
        if Self.refreshing == ObjectIdentifier(coordinator) { return (body, exchanged) }
        let (data, drained) = await drain(body)
        // Cancelled while the 401 came in or its body was read: no refresh for a caller that
        // has gone (a stream's drain swallows the cancellation).
        try Task.checkCancellation()
        var unauthenticated = request
        unauthenticated.setValue(nil, forHTTPHeaderField: authService.headerField)
        let current = try await authorized(unauthenticated).value(forHTTPHeaderField: authService.headerField)
        let now = policy.now()
        let (action, refreshNumber, lastTransient) = shared.withLock {
            shared -> (RefreshCoordinatorState.Action, Int, ReauthError?) in
            // The service vouches for the credential it added (by header and value), even one
            // the app has replaced since; a credential it did not add may be the caller's own.
            let action = shared.state.unauthorized(
                sent: Self.fingerprint(sent), current: current.map(Self.fingerprint), sentAtEpoch: epoch, now: now,
                vouchedFor: witness.isServiceCredential(sent, in: authService.headerField))
            if action == .startRefresh {
                shared.refreshNumber += 1
                shared.inFlight = shared.refreshNumber
            }
            return (action, shared.refreshNumber, shared.lastTransientFailure)
        }
        if action == .startRefresh { started.withLock { $0 += 1 } }
        switch action {
        case .refuseLimitExceeded:
            let limit = ReauthError(
                .refreshLimitExceeded,
                message: "\(policy.maxRefreshes) token refreshes within \(policy.window) s; not refreshing again.",
                underlyingError: lastTransient)
            ExchangeRecorder.note(.refreshFailed(reason: "\(limit.code)"))
            throw unauthorized(response, body: data, request: request, cause: limit)
        case .startRefresh, .joinRefresh:
            if action == .startRefresh {
                startRefresh(number: refreshNumber, probe: unauthenticated)
                ExchangeRecorder.note(.refreshStarted)
            } else {
                ExchangeRecorder.note(.refreshJoined)
            }
            do {
                try await waitForRefresh(number: refreshNumber, response: response, body: data, request: request)
            } catch let error as TransportError {
                let code = (error.underlyingError as? ReauthError).map { "\($0.code)" } ?? "\(error.code)"
                ExchangeRecorder.note(.refreshFailed(reason: code))
                throw error
            }
            ExchangeRecorder.note(.refreshFinished)
        case .retryWithCurrentCredentials:
            break
        case .notIssued:
            // Possibly the caller's own credential (a partner's key, a login's Basic
            // credentials): ours must not replace it, least of all on a request for another
            // origin.
            return (drained, exchanged)
        }
        try Task.checkCancellation()
        let retried = try await authorized(unauthenticated)
        ExchangeRecorder.note(.reauthorized)
        // The request's records and error texts were made for the old credential: the new one is
        // scrubbed too (a server may echo it, in a 403 or a body that does not decode).
        let refreshedValue = retried.value(forHTTPHeaderField: authService.headerField)
        if let refreshedValue { witness.noteRefreshedCredential(refreshedValue) }
        ExchangeRecorder.noteCredential(refreshedValue, header: authService.headerField)
        return try await exchange(retried)
    }

    /// `request` authorized by ``authService``. What its store throws (a keychain or file error)
    /// is ``NetworkError`` `.authorizationFailed`, as ``HTTPNetworkService`` reports the same
    /// failure before sending; a ``TransportError``, a ``NetworkError`` and a cancellation pass
    /// through unchanged.
    private func authorized(_ request: URLRequest) async throws -> URLRequest {
        do {
            return try await authService.authorize(request)
        } catch let error where error is TransportError || error is NetworkError || error is CancellationError {
            throw error
        } catch {
            throw NetworkError.authorizationFailure(error, url: request.url)
        }
    }

    /// Runs the refresh in its own task, so that cancelling the caller that started it does not
    /// abort a refresh that other callers are waiting for, and races it against the timeout.
    /// `probe` (the request without credentials) is authorized after the refresh, to learn the
    /// fingerprint of the credential it produced.
    private func startRefresh(number: Int, probe: URLRequest) {
        let id = ObjectIdentifier(coordinator)
        let refresh = Task { [refreshToken, authService] () -> Result<String?, ReauthError> in
            do {
                // The refresh is not part of the request that started it (a task inherits
                // task-locals): what it sends is not counted in that request's metrics, is not
                // held to that request's response limit (an endpoint's 64-byte limit failed the
                // token response, a huge one lifted the default for it), and is not witnessed
                // for that request's redirects. It is marked as this transport's refresh. Its
                // requests are retried as any are, also when an event source's connection (which
                // passes its attempts through `RetryTransport` once) started it.
                let credential = try await ExchangeRecorder.observing(nil) {
                    try await RetryTransport.$isBypassed.withValue(false) {
                        try await ResponseLimits.$bodyLimitOverride.withValue(nil) {
                            try await ResponseLimits.$bodyLimitCap.withValue(nil) {
                                try await RequestWitness.$current.withValue(nil) {
                                    try await Self.$refreshing.withValue(id) {
                                        try await refreshToken()
                                        // A credential that cannot be sent (CR or LF in a token the refresh
                                        // endpoint handed out) is a failed refresh: taken as a success
                                        // (`try?`), it retired the old token and failed every later
                                        // request before sending, with no 401 to refresh on again.
                                        return try await authService.authorize(probe).value(
                                            forHTTPHeaderField: authService.headerField)
                                    }
                                }
                            }
                        }
                    }
                }
                return .success(credential.map(Self.fingerprint))
            } catch {
                return .failure(
                    ReauthError(
                        .refreshFailed,
                        // The closure's error may quote what the refresh endpoint sent.
                        message: "The token refresh failed: \(Redactor.describing(error))",
                        underlyingError: error))
            }
        }
        let timeout = policy.refreshTimeout
        let timer = Task { [policy, shared] in
            do {
                try await policy.sleep(timeout)
            } catch {
                return
            }
            guard !Task.isCancelled else { return }
            let timedOut = ReauthError(
                .refreshTimedOut, message: "The token refresh did not finish within \(timeout) s; it was cancelled.")
            if Self.finish(number, with: .failure(timedOut), shared: shared) { refresh.cancel() }
        }
        Task { [shared] in
            let outcome = await refresh.value
            timer.cancel()
            Self.finish(number, with: outcome, shared: shared)
        }
    }

    /// Records the outcome of refresh `number` (on success, the new credential's fingerprint)
    /// and resumes its waiters, unless it already finished. Returns whether this call finished it.
    @discardableResult
    private static func finish(
        _ number: Int, with result: Result<String?, ReauthError>, shared: Locked<Shared>
    ) -> Bool {
        let outcome = result.map { _ in () }
        let waiters = shared.withLock { shared -> [CheckedContinuation<Void, any Error>]? in
            guard shared.inFlight == number else { return nil }
            shared.inFlight = nil
            switch result {
            case .success(let credential):
                shared.state.refreshSucceeded(newCredential: credential)
                shared.lastTransientFailure = nil
            case .failure(let failure):
                shared.state.refreshFailed()
                shared.lastTransientFailure = failure.isTransient ? failure : nil
            }
            shared.outcomes[number] = outcome
            shared.outcomes = shared.outcomes.filter { $0.key > number - 8 }
            return shared.waiters.removeValue(forKey: number).map { Array($0.values) } ?? []
        }
        guard let waiters else { return false }
        for waiter in waiters {
            waiter.resume(with: outcome.mapError { $0 as any Error })
        }
        return true
    }

    /// Waits for refresh `number` to finish. Cancelling the caller stops the wait at once (the
    /// refresh itself goes on for the others).
    private func waitForRefresh(number: Int, response: HTTPURLResponse, body: Data, request: URLRequest) async throws {
        let id = shared.withLock { shared -> Int in
            shared.nextWaiterID += 1
            return shared.nextWaiterID
        }
        do {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let immediate = shared.withLock { shared -> Result<Void, any Error>? in
                        if Task.isCancelled { return .failure(CancellationError()) }
                        if let outcome = Self.settledOutcome(of: number, in: shared) {
                            return outcome.mapError { $0 as any Error }
                        }
                        shared.waiters[number, default: [:]][id] = continuation
                        return nil
                    }
                    if let immediate { continuation.resume(with: immediate) }
                }
            } onCancel: {
                let waiter = shared.withLock { $0.waiters[number]?.removeValue(forKey: id) }
                waiter?.resume(throwing: CancellationError())
            }
        } catch let failure as ReauthError {
            throw unauthorized(response, body: body, request: request, cause: failure)
        }
    }

    /// What a caller about to wait for refresh `number` gets at once: the refresh's outcome when
    /// it has finished; a success when it finished so long before that its outcome was dropped
    /// (eight later refreshes ended in between), so the caller retries with the current
    /// credential and a new 401 decides again; `nil` while it is in flight (wait). Registered
    /// for a refresh that had already ended, a waiter was never resumed: it hung for good.
    static func settledOutcome(of number: Int, in shared: Shared) -> Result<Void, ReauthError>? {
        if let outcome = shared.outcomes[number] { return outcome }
        // Only the refresh in flight is unfinished (`inFlight` is cleared when it ends, and a
        // new one starts only after that), so any other number has ended.
        return shared.inFlight == number ? nil : .success(())
    }

    /// A short, non-reversible identity for a credential, so raw tokens are not kept.
    static func fingerprint(_ credential: String) -> String {
        SHA256Digest.hexHash(credential)
    }

    /// The error for a 401 this transport could not recover; what its response shows is scrubbed
    /// of the request's credentials, the auth service's own header included.
    private func unauthorized(
        _ response: HTTPURLResponse, body: Data, request: URLRequest, cause: ReauthError
    ) -> TransportError {
        TransportError(
            .authenticationFailed, url: response.url ?? request.url, message: cause.message, underlyingError: cause,
            response: HTTPErrorResponse(response, body: body).scrubbingShownText(
                of: Redactor.credentialValues(of: request, alsoHeaders: [authService.headerField])))
    }
}

/// The loop guard, refresh timeout and clock of a ``ReauthTransport``.
public struct ReauthPolicy: Sendable {
    /// The refresh timeout used when none (or an unusable one) is given: 30 s.
    public static let defaultRefreshTimeout: TimeInterval = 30

    /// The most refreshes within ``window``; 3 by default.
    public var maxRefreshes: Int
    /// The loop-guard window in seconds; 60 by default.
    public var window: TimeInterval
    /// How long a refresh may take, in seconds, before every waiter fails with
    /// ``ReauthError/Code/refreshTimedOut`` and the refresh is cancelled; 30 by default. Always
    /// finite and positive: see ``init(maxRefreshes:window:refreshTimeout:now:sleep:)``.
    public var refreshTimeout: TimeInterval {
        get { storedRefreshTimeout }
        set { storedRefreshTimeout = Self.clampedTimeout(newValue) }
    }
    /// The current time; `Date()` by default.
    public var now: @Sendable () -> Date
    /// Waits a number of seconds, for the refresh timeout; `RetryClock.live.sleep` by default.
    /// Must throw promptly when its task is cancelled.
    public var sleep: @Sendable (TimeInterval) async throws -> Void

    private var storedRefreshTimeout: TimeInterval

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - maxRefreshes: 3 by default; values below 1 count as 1.
    ///   - window: 60 s by default.
    ///   - refreshTimeout: 30 s by default. NaN, infinite, zero and negative values mean the
    ///     default 30 s (a refresh is never allowed to hang forever); values above one day count
    ///     as one day.
    ///   - now: `Date()` by default; inject a fixed clock in tests.
    ///   - sleep: `RetryClock.live.sleep` by default; inject one to fire the timeout in tests.
    public init(
        maxRefreshes: Int = 3, window: TimeInterval = 60, refreshTimeout: TimeInterval = defaultRefreshTimeout,
        now: @escaping @Sendable () -> Date = { Date() },
        sleep: @escaping @Sendable (TimeInterval) async throws -> Void = RetryClock.live.sleep
    ) {
        self.maxRefreshes = max(1, maxRefreshes)
        self.window = window
        self.storedRefreshTimeout = Self.clampedTimeout(refreshTimeout)
        self.now = now
        self.sleep = sleep
    }

    private static func clampedTimeout(_ value: TimeInterval) -> TimeInterval {
        guard value.isFinite, value > 0 else { return defaultRefreshTimeout }
        return min(value, 86_400)
    }
}

/// Why ``ReauthTransport`` could not recover from a 401: the underlying error of the
/// ``TransportError`` it throws, and of the ``NetworkError`` ``HTTPNetworkService`` makes of it.
public struct ReauthError: Error, Sendable, CustomStringConvertible, CustomReflectable {
    /// The category of a ``ReauthError``.
    public enum Code: Sendable, Hashable {
        /// The refresh closure threw; ``ReauthError/underlyingError`` has its error.
        case refreshFailed
        /// The loop guard tripped.
        case refreshLimitExceeded
        /// The refresh did not finish within ``ReauthPolicy/refreshTimeout``; it was cancelled.
        case refreshTimedOut
    }

    /// What went wrong.
    public let code: Code
    /// A human-readable explanation.
    public let message: String
    /// The refresh closure's error, for ``Code/refreshFailed``; for ``Code/refreshLimitExceeded``,
    /// the last refresh's failure when it was transient.
    public let underlyingError: (any Error)?

    /// Creates an error.
    public init(_ code: Code, message: String, underlyingError: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlyingError = underlyingError
    }

    /// What `dump(_:)`, `String(reflecting:)` and LLDB's `po` show: the code, the message and the underlying error, a
    /// `URLError` by its code only (its user info holds the token endpoint's URL as sent).
    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["code": code, "message": message, "underlyingError": Redactor.reflected(underlyingError)],
            displayStyle: .struct)
    }

    /// Whether the refresh failed for a reason that says nothing about the credential, so a
    /// later attempt may well succeed: it timed out (``Code/refreshTimedOut``), or its error is a
    /// transient transport failure (``RetryPolicy/isTransient(_:)``: offline, a lost or refused
    /// connection, a timeout) or a status the token endpoint may answer differently later
    /// (``RetryPolicy/retryableStatusCodes``: 408, 429, 500, 502, 503, 504), whether as a
    /// ``NetworkError``, a ``TransportError`` carrying the response, or a `URLError`.
    ///
    /// ``HTTPNetworkService`` does not call its ``TokenInvalidationHandler`` for such a failure:
    /// signing the user out because the token endpoint was unreachable for a moment would lose a
    /// session that is still good. The call still throws the 401 (`.httpStatusError(.unauthorized)`)
    /// with this error attached; the next 401 starts a new refresh (within the loop guard).
    /// ``Code/refreshLimitExceeded`` is transient when the last refresh before it failed for a
    /// transient reason (its ``underlyingError`` is that failure): the token endpoint down for a
    /// minute used up the loop guard, and the fourth 401 signed the user out. `false` for any
    /// other error of the refresh (an `invalid_grant` 400, a 401 from the token endpoint, an
    /// error of the app's own).
    public var isTransient: Bool {
        switch code {
        case .refreshTimedOut: return true
        // Tripped right after a transient failure: the refreshes failed, not the credential.
        case .refreshLimitExceeded: return (underlyingError as? ReauthError)?.isTransient ?? false
        case .refreshFailed:
            guard let underlyingError else { return false }
            if RetryPolicy.isTransient(underlyingError) { return true }
            let status =
                (underlyingError as? NetworkError)?.statusCode
                ?? (underlyingError as? TransportError)?.response?.statusCode
            return status.map(RetryPolicy.retryableStatusCodes.contains) ?? false
        }
    }

    /// The code and message.
    public var description: String { "ReauthError.\(code): \(message)" }
}

extension ReauthTransport: DeferredResponseTransport {}

/// The refresh bookkeeping of the ``ReauthTransport``s over one auth service object: made by
/// the first, shared by the others while any of them lives.
final class ReauthCoordinator: Sendable {
    let shared: Locked<ReauthTransport.Shared>

    init(policy: ReauthPolicy) {
        shared = Locked(
            ReauthTransport.Shared(
                state: RefreshCoordinatorState(maxRefreshes: policy.maxRefreshes, window: policy.window)))
    }

    /// A live coordinator and the service object it is for (both weak: an entry whose transports
    /// or service are gone is dropped, so an address reused by a new service never finds it); a
    /// service value with a ``SharedCredentialIdentity`` has no object (`service` is `nil`).
    private struct Entry {
        weak var service: AnyObject?
        let isObject: Bool
        weak var coordinator: ReauthCoordinator?

        var isLive: Bool { coordinator != nil && (!isObject || service != nil) }
    }

    private static let entries = Locked<[AnyHashable: Entry]>([:])

    /// The coordinator of the transports over `authService`: the one in use when the service is
    /// an object other transports already use, or a value whose ``SharedCredentialIdentity``
    /// theirs has, else a new one.
    static func shared(for authService: any AuthServiceProtocol, policy: ReauthPolicy) -> ReauthCoordinator {
        let key: AnyHashable
        var object: AnyObject?
        if let identified = authService as? any SharedCredentialIdentity {
            key = identified.credentialIdentity
        } else if type(of: authService) is AnyClass {
            let instance = authService as AnyObject
            key = ObjectIdentifier(instance)
            object = instance
        } else {
            return ReauthCoordinator(policy: policy)
        }
        return entries.withLock { entries in
            if let entry = entries[key], entry.isLive, entry.service === object, let existing = entry.coordinator {
                return existing
            }
            entries = entries.filter { $0.value.isLive }
            let made = ReauthCoordinator(policy: policy)
            entries[key] = Entry(service: object, isObject: object != nil, coordinator: made)
            return made
        }
    }
}

/// An auth service value (a struct) whose copies, and other values equal by
/// ``credentialIdentity``, read and write one stored credential: ``ReauthTransport``s over them
/// share one refresh at a time, as over one auth service object.
package protocol SharedCredentialIdentity {
    /// What tells the stored credential apart: equal for values that share it.
    var credentialIdentity: AnyHashable { get }
}

extension SystemKeyChainAuthService: SharedCredentialIdentity {
    /// The store (the platform Keychain, or the credentials file's path), service and account.
    package var credentialIdentity: AnyHashable {
        [
            "SystemKeyChainAuthService", fileStore.map { $0.fileURL?.path ?? "<no file>" } ?? "<keychain>", service,
            account,
        ]
    }
}

extension ReauthError: LocalizedError {
    /// The same text as ``ReauthError/message``: what `localizedDescription` shows (an alert, a log line),
    /// free of credentials, instead of Foundation's generic "The operation could not be completed".
    public var errorDescription: String? { message }
}
