import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``NetworkServiceProtocol`` that answers every request with the same JSON, after an optional
/// simulated latency: for view-model tests and previews. It sends nothing.
///
/// ```swift
/// let service = MockNetworkService(responseJSON: #"[{"id": 1}]"#, duration: .milliseconds(300))
/// let models: [Model] = try await service.requestModels(to: endpoint, via: environment)
/// ```
///
/// The latency is a sleep on ``clock``, so a test can pass a clock it controls and advance it
/// instead of waiting.
///
/// Available from macOS 13, iOS 16, tvOS 16 and watchOS 9, where `Duration` and `Clock` are (the
/// original GentleNetworking required iOS 17); without the annotation the package did not build
/// for its own minimum platforms (iOS 15, macOS 12).
@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
public struct MockNetworkService: NetworkServiceProtocol {
    /// The body every request decodes.
    public let data: Data
    /// The decoder for ``data``.
    public let jsonDecoder: JSONDecoder
    /// The simulated latency of each call; `.zero` (no wait) by default. A negative duration
    /// counts as zero.
    public let duration: Duration
    /// The clock the latency is measured on; `ContinuousClock()` by default.
    public let clock: any Clock<Duration>

    /// Creates a service answering with `data`.
    ///
    /// - Parameters:
    ///   - data: The response body.
    ///   - jsonDecoder: A plain `JSONDecoder` by default.
    ///   - duration: The latency of each call; `.zero` by default.
    ///   - clock: `ContinuousClock()` by default.
    public init(
        data: Data,
        jsonDecoder: JSONDecoder = JSONDecoder(),
        duration: Duration = .zero,
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.data = data
        self.jsonDecoder = jsonDecoder
        self.duration = duration
        self.clock = clock
    }

    /// Creates a service answering with the UTF-8 text `responseJSON`; empty by default, which
    /// only ``requestVoid(to:via:)`` accepts.
    ///
    /// - Parameters:
    ///   - responseJSON: The response body; `""` by default.
    ///   - jsonDecoder: A plain `JSONDecoder` by default.
    ///   - duration: The latency of each call; `.zero` by default.
    ///   - clock: `ContinuousClock()` by default.
    public init(
        responseJSON: String = "",
        jsonDecoder: JSONDecoder = JSONDecoder(),
        duration: Duration = .zero,
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.init(data: Data(responseJSON.utf8), jsonDecoder: jsonDecoder, duration: duration, clock: clock)
    }

    /// Waits ``duration``, then decodes ``data`` as `Model`.
    ///
    /// - Throws: `CancellationError` when cancelled during the wait; ``NetworkError`` of kind
    ///   ``NetworkError/Kind/decodingFailed`` (with a ``DecodingFailure``) when ``data`` is not a
    ///   `Model`.
    public func request<Model: Decodable>(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol
    ) async throws -> Model {
        try await simulateLatency()
        return try decode(Model.self)
    }

    /// Waits ``duration``, then decodes ``data`` as a JSON array of `Model`.
    ///
    /// - Throws: What ``request(to:via:)`` throws.
    public func requestModels<Model: Decodable>(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol
    ) async throws -> [Model] {
        try await simulateLatency()
        return try decode([Model].self)
    }

    /// Waits ``duration``, then returns `.success(code: 200)` whatever ``data`` holds.
    ///
    /// - Throws: `CancellationError` when cancelled during the wait.
    @discardableResult
    public func requestVoid(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol
    ) async throws -> NetworkServiceEmptyResponseResult {
        try await simulateLatency()
        return .success(code: 200)
    }

    private func simulateLatency() async throws {
        try Task.checkCancellation()
        guard duration > .zero else { return }
        // At most about 31 years: the clock converts the duration, and `.seconds(Int64.max)`
        // trapped there ("Not enough bits").
        try await clock.sleep(for: min(duration, .seconds(Int64(Clamp.maxSeconds))))
    }

    private func decode<Model: Decodable>(_ type: Model.Type) throws -> Model {
        do {
            return try jsonDecoder.decode(type, from: data)
        } catch {
            let failure = DecodingFailure.from(
                error, modelType: String(describing: Model.self), statusCode: 200, body: data)
            throw NetworkError(
                .decodingFailed, message: failure.description, decodingFailure: failure,
                underlyingError: DecodingFailure.sanitized(error, sentWith: nil))
        }
    }
}
