import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends requests with a `URLSession`: the default transport on Apple platforms.
///
/// Beyond a plain `session.data(for:)`, it guarantees:
/// - **Prompt cancellation.** Cancelling the calling task cancels the `URLSessionTask` and
///   throws `CancellationError` at once, without waiting for the session.
/// - **No credential leaks on redirect.** `Authorization`, `Cookie` and `Proxy-Authorization`
///   are removed when a redirect leaves the original origin (scheme, host or port). URLSession
///   on Linux forwards them otherwise.
/// - **Bounded redirects.** More than ``maxRedirects`` redirects, or a loop, throws
///   ``TransportError`` with code ``TransportError/Code/tooManyRedirects``.
/// - **Typed errors.** `URLError`s become ``TransportError``s.
public final class URLSessionTransport: HTTPTransportProtocol {
    /// The session requests are sent with.
    public let session: URLSession
    /// The most redirects followed for one request; 10 by default. 0 disables redirects, and a
    /// 3xx is then returned as the response.
    public let maxRedirects: Int

    /// Creates a transport.
    ///
    /// - Parameters:
    ///   - session: The session to send with; `URLSession.shared` by default.
    ///   - maxRedirects: The redirect limit; 10 by default. Negative values count as 0.
    public init(session: URLSession = .shared, maxRedirects: Int = 10) {
        self.session = session
        self.maxRedirects = max(0, maxRedirects)
    }

    /// Sends `request` with the session's data task.
    ///
    /// - Throws: `CancellationError` when the task is cancelled (at once, without waiting for
    ///   the session), ``TransportError`` for connection, TLS, timeout and redirect failures.
    public func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        try Task.checkCancellation()
        try RequestValidator.validate(request)
        let call = PendingCall()
        let guardDelegate = RedirectGuard(originalURL: request.url, maxRedirects: maxRedirects)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                call.setContinuation(continuation)
                let task = session.dataTask(with: request) { data, response, error in
                    call.complete(
                        Self.outcome(
                            data: data, response: response, error: error, request: request, guard: guardDelegate))
                }
                task.delegate = guardDelegate
                call.start(task)
            }
        } onCancel: {
            call.cancel()
        }
    }

    private static func outcome(
        data: Data?, response: URLResponse?, error: (any Error)?, request: URLRequest, guard redirect: RedirectGuard
    ) -> Result<(Data, HTTPURLResponse), any Error> {
        if let failure = redirect.failure {
            return .failure(failure)
        }
        if let error {
            if let urlError = error as? URLError {
                return .failure(TransportError.map(urlError, url: request.url))
            }
            return .failure(
                TransportError(.other, url: request.url, message: error.localizedDescription, underlyingError: error))
        }
        guard let http = response as? HTTPURLResponse else {
            return .failure(
                TransportError(.badResponse, url: request.url, message: "The response is not an HTTP response."))
        }
        return .success((data ?? Data(), http))
    }
}

/// Joins a `URLSessionTask` with the continuation waiting for it, so that whichever of
/// completion and cancellation comes first resumes the caller, exactly once.
private final class PendingCall: Sendable {
    private struct State {
        var continuation: CheckedContinuation<(Data, HTTPURLResponse), any Error>?
        var task: URLSessionDataTask?
        var cancelled = false
    }

    private let state = Locked(State())

    func setContinuation(_ continuation: CheckedContinuation<(Data, HTTPURLResponse), any Error>) {
        state.withLock { $0.continuation = continuation }
    }

    func start(_ task: URLSessionDataTask) {
        let cancelled = state.withLock { state -> Bool in
            state.task = task
            return state.cancelled
        }
        if cancelled {
            task.cancel()
            complete(.failure(CancellationError()))
        } else {
            task.resume()
        }
    }

    func cancel() {
        let task = state.withLock { state -> URLSessionDataTask? in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
        complete(.failure(CancellationError()))
    }

    func complete(_ result: Result<(Data, HTTPURLResponse), any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<(Data, HTTPURLResponse), any Error>? in
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(with: result)
    }
}

/// The per-task delegate that applies ``RedirectTracker``'s rules to URLSession's redirects:
/// credentials stripped across origins, the hop limit and loop detection.
private final class RedirectGuard: NSObject, URLSessionTaskDelegate, Sendable {
    private struct State {
        var tracker: RedirectTracker
        var failure: TransportError?
    }

    private let state: Locked<State>

    init(originalURL: URL?, maxRedirects: Int) {
        self.state = Locked(State(tracker: RedirectTracker(originalURL: originalURL, maxRedirects: maxRedirects)))
    }

    var failure: TransportError? { state.current.failure }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let next = state.withLock { state -> URLRequest? in
            guard state.tracker.maxRedirects > 0 else { return nil }
            do throws(TransportError) {
                try state.tracker.follow(to: request.url)
            } catch {
                state.failure = error
                return nil
            }
            return state.tracker.strippingCredentials(request, for: request.url)
        }
        completionHandler(next)
    }
}
