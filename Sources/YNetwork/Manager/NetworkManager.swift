import Foundation
import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Called with a request's result, on the main queue.
public typealias APICompletion<Response: Decodable> = @Sendable (Result<Response, any Error>) -> Void

/// A fraction of a transfer, in 0…1.
public typealias Percentage = Double

/// Called with a transfer's progress, on the main queue; the last call reports `1.0`.
public typealias ProgressHandler = @Sendable (Percentage) -> Void

/// Called with a finished download: the temporary file (move it before returning: it is
/// removed afterwards) or the error.
public typealias FileDownloadHandler = @Sendable (Result<URL, any Error>) -> Void

/// Called, on the main queue, with the response body of a successful upload.
public typealias FileUploadHandler = @Sendable (Data) -> Void

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
open class NetworkManager: @unchecked Sendable {
    // @unchecked: all mutable state is in `state`, behind its lock.
    private struct State {
        var configuration: NetworkManagerConfiguration?
        var sessionManager: (any SessionManager)?
        /// Bumped when a refresh ends, whatever its outcome: a 401 to a request sent before the
        /// bump does not refresh again; it retries if that refresh succeeded and fails if not.
        var refreshGeneration = 0
        var lastRefreshSucceeded = true
        var refreshInFlight: Task<Bool, Never>?
    }

    private let state = Locked(State())

    /// Creates a manager that works without configuration.
    public init() {}

    /// The current configuration (the default one until ``configure(with:sessionManager:)``).
    public var configuration: NetworkManagerConfiguration {
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
    public func configure(with configuration: NetworkManagerConfiguration, sessionManager: (any SessionManager)? = nil)
    {
        state.withLock { state in
            state.configuration = configuration
            state.sessionManager = sessionManager
        }
        configuration.networkEngine.configure(with: configuration.engineConfiguration)
    }

    /// Sends `request` and parses the response as `Response`.
    ///
    /// - Throws: ``NetworkError``, ``HttpError``, `CancellationError`, or the transport's error
    ///   when it is neither a TLS nor a connectivity failure (a timeout, for example).
    open func submit<Response: Decodable>(_ request: NetworkRequest) async throws -> Response {
        let configuration = self.configuration
        let (data, response) = try await exchange(request, configuration: configuration)
        return try parse(data, response: response, request: request, configuration: configuration)
    }

    /// Sends `request` and calls `completion` with the parsed response on the main queue.
    ///
    /// - Returns: A handle that cancels the request (the completion then gets `CancellationError`).
    @discardableResult
    open func submit<Response: Decodable & Sendable>(
        _ request: NetworkRequest, completion: @escaping APICompletion<Response>
    ) -> Cancelable {
        TransferHandle(
            Task {
                let result: Result<Response, any Error>
                do {
                    result = .success(try await self.submit(request))
                } catch {
                    result = .failure(error)
                }
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    DispatchQueue.main.async {
                        completion(result)
                        done.resume()
                    }
                }
            })
    }

    /// A hook called with every exchange's outcome before it is parsed (data and response) or
    /// thrown (error); it does nothing by default. Override it to log or record.
    open func peekTaskResult(request: NetworkRequest, data: Data?, response: URLResponse?, error: (any Error)?) {}

    // MARK: - Sending

    /// Sends `request` (refreshing once on a 401) and returns the final body and response.
    func exchange(
        _ request: NetworkRequest, configuration: NetworkManagerConfiguration
    ) async throws -> (Data, URLResponse) {
        do {
            let built = try RequestAssembler(configuration: configuration).build(request)
            defer { built.removeTemporaryFile() }
            let (data, response) = try await withSession(request, built.request) { urlRequest in
                try await self.send(urlRequest, body: built, engine: configuration.networkEngine)
            }
            peekTaskResult(request: request, data: data, response: response, error: nil)
            return (data, response)
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

    /// Sends `urlRequest` with the session's credentials (when `request` uses the session); on a
    /// 401, refreshes them once (shared with every concurrent 401) and sends once more.
    func withSession<Value>(
        _ request: NetworkRequest, _ urlRequest: URLRequest,
        send: (URLRequest) async throws -> (Value, URLResponse)
    ) async throws -> (Value, URLResponse) {
        guard request.usesSession, let sessionManager = self.sessionManager else { return try await send(urlRequest) }
        // Read before the credentials are applied: a refresh that ends in between then counts
        // as one this request may not have seen, which at worst costs a retry, never a refresh.
        let generation = state.withLock { $0.refreshGeneration }
        var first = urlRequest
        sessionManager.apply(&first)
        let (value, response) = try await send(first)
        guard (response as? HTTPURLResponse)?.statusCode == 401,
            await sharedRefresh(sentAt: generation, sessionManager: sessionManager)
        else {
            return (value, response)
        }
        var retry = urlRequest
        sessionManager.apply(&retry)
        return try await send(retry)
    }

    /// One refresh for every request that failed with the credentials of `generation`.
    private func sharedRefresh(sentAt generation: Int, sessionManager: any SessionManager) async -> Bool {
        enum Step {
            case settled(Bool)
            case wait(Task<Bool, Never>)
        }
        let step: Step = state.withLock { state in
            if state.refreshGeneration != generation { return .settled(state.lastRefreshSucceeded) }
            if let running = state.refreshInFlight { return .wait(running) }
            let started = Task { await sessionManager.refresh(networkManager: self) }
            state.refreshInFlight = started
            return .wait(started)
        }
        switch step {
        case .settled(let succeeded):
            return succeeded
        case .wait(let task):
            let refreshed = await task.value
            state.withLock { state in
                guard state.refreshInFlight == task else { return }
                state.refreshInFlight = nil
                state.refreshGeneration += 1
                state.lastRefreshSucceeded = refreshed
            }
            return refreshed
        }
    }

    // MARK: - Parsing

    func parse<Response: Decodable>(
        _ data: Data, response: URLResponse, request: NetworkRequest, configuration: NetworkManagerConfiguration
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
            return try decode(Response.self, data, decoder)
        case .JSON:
            guard !data.isEmpty else { throw NetworkError.noData }
            guard let decoder = factory.decoder(for: .JSON) else { throw NetworkError.noDecoder }
            return try decode(Response.self, data, decoder)
        }
    }

    private func decode<Response: Decodable>(
        _ type: Response.Type, _ data: Data, _ decoder: DataDecoder
    ) throws -> Response {
        do {
            return try decoder.decode(type, from: data)
        } catch {
            throw NetworkError.deserialization(error)
        }
    }
}
