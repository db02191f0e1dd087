import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends endpoints over a transport and decodes the answers: the library's front door.
///
/// The path of a request:
/// 1. ``EndpointRequestBuilder`` joins the endpoint to the environment's base URL, encodes
///    the query and the JSON body, and sets `Accept` and `Content-Type`.
/// 2. When the endpoint `requiresAuth`, the auth service adds its credential.
/// 3. The transport (a stack of decorators, ending in a real one) sends it.
/// 4. A non-2xx status throws ``NetworkError`` of kind ``NetworkError/Kind/httpStatusError(_:)``
///    carrying the status, headers and body; a 2xx body is decoded.
///
/// Every request and response is reported to the injected ``NetworkLogger``, redacted.
/// Cancelling the calling task cancels the request and throws `CancellationError`.
public struct HTTPNetworkService: NetworkServiceProtocol {
    /// The transport requests are sent over.
    public let transport: any HTTPTransportProtocol
    /// The auth service used for endpoints that require auth.
    public let authService: any AuthServiceProtocol
    /// The decoder for 2xx bodies.
    public let jsonDecoder: JSONDecoder
    /// The encoder for request bodies.
    public let jsonEncoder: JSONEncoder
    /// Where request and response records go.
    public let logger: any NetworkLogger
    /// Told about every 401 before the call throws; `nil` by default.
    public let invalidationHandler: (any TokenInvalidationHandler)?
    /// `transport`, when it can defer building responses; resolved once, not per request.
    private let deferredTransport: (any DeferredResponseTransport)?

    /// Creates a service. Every argument has a default, so `HTTPNetworkService()` works.
    ///
    /// - Parameters:
    ///   - transport: A ``RetryTransport`` with the default ``RetryPolicy`` over the platform's
    ///     default transport (see ``DefaultTransport``) by default, as in the original
    ///     GentleNetworking: idempotent requests are retried (up to 3 times) after a 408, 429,
    ///     500, 502, 503, 504 or a connection failure; a POST or PATCH without an
    ///     `Idempotency-Key` never is. Pass `DefaultTransport.make()` for no retries.
    ///   - authService: ``SystemKeyChainAuthService`` by default.
    ///   - invalidationHandler: Awaited on every 401 from the request's origin before the call throws (see
    ///     ``TokenInvalidationHandler``); `nil` by default.
    ///   - jsonDecoder: When `nil` (the default), a `JSONDecoder` whose dates are ISO 8601 with or
    ///     without fractional seconds (``DateDecodingStrategies/iso8601FractionalAndNonFractionalSeconds``),
    ///     as in the seed; a date in any other form is a decoding error.
    ///   - jsonEncoder: A plain `JSONEncoder` when `nil` (the default).
    ///   - logger: ``NoOpNetworkLogger`` by default.
    public init(
        transport: any HTTPTransportProtocol = RetryTransport(),
        authService: any AuthServiceProtocol = SystemKeyChainAuthService(),
        invalidationHandler: (any TokenInvalidationHandler)? = nil,
        jsonDecoder: JSONDecoder? = nil,
        jsonEncoder: JSONEncoder? = nil,
        logger: any NetworkLogger = NoOpNetworkLogger()
    ) {
        self.transport = transport
        self.authService = authService
        self.invalidationHandler = invalidationHandler
        self.jsonDecoder = jsonDecoder ?? Self.defaultDecoder()
        self.jsonEncoder = jsonEncoder ?? JSONEncoder()
        self.logger = logger
        self.deferredTransport = transport as? any DeferredResponseTransport
    }

    /// The decoder used when none is given: ISO 8601 dates, with or without fractional seconds.
    static func defaultDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = DateDecodingStrategies.iso8601FractionalAndNonFractionalSeconds
        return decoder
    }

    /// Sends `endpoint` and decodes the 2xx body as `Model`.
    ///
    /// - Throws: ``NetworkError`` (status, decoding, URL, transport failures) or
    ///   `CancellationError`. Errors of other types thrown by a custom transport pass through
    ///   unchanged.
    public func request<Model: Decodable>(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol
    ) async throws -> Model {
        guard let (data, deferred, request) = try await sendDeferred(to: endpoint, via: environment) else {
            return try await requestWithResponse(to: endpoint, via: environment).model
        }
        do {
            return try jsonDecoder.decode(Model.self, from: data)
        } catch {
            throw decodingError(
                error, modelType: Model.self, response: try fullResponse(deferred, request), data: data,
                request: request)
        }
    }

    /// Sends `endpoint` and decodes the 2xx body as a top-level JSON array of `Model`.
    public func requestModels<Model: Decodable>(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol
    ) async throws -> [Model] {
        try await request(to: endpoint, via: environment)
    }

    /// Sends `endpoint`, checks for a 2xx status and ignores the body (204 and empty bodies
    /// included).
    ///
    /// - Returns: `.success(code:)` with the 2xx status; discardable.
    @discardableResult
    public func requestVoid(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol
    ) async throws -> NetworkServiceEmptyResponseResult {
        if let (_, deferred, _) = try await sendDeferred(to: endpoint, via: environment) {
            return .success(code: deferred.statusCode)
        }
        return .success(code: try await requestData(to: endpoint, via: environment).response.statusCode)
    }

    /// Sends `endpoint`, decodes the 2xx body as `Model`, and also returns the response, for
    /// callers that need headers (pagination links, rate-limit counters) or the exact status.
    public func requestWithResponse<Model: Decodable>(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol
    ) async throws -> (model: Model, response: HTTPURLResponse) {
        let (data, response, request) = try await exchange(endpoint, environment)
        do {
            return (try jsonDecoder.decode(Model.self, from: data), response)
        } catch {
            throw decodingError(error, modelType: Model.self, response: response, data: data, request: request)
        }
    }

    private func decodingError<Model>(
        _ error: any Error, modelType: Model.Type, response: HTTPURLResponse, data: Data, request: URLRequest
    ) -> NetworkError {
        let failure = DecodingFailure.from(
            error, modelType: String(describing: Model.self), statusCode: response.statusCode, body: data,
            secrets: secrets(of: request))
        return NetworkError(
            .decodingFailed, message: failure.description, url: response.url,
            response: HTTPErrorResponse(response, body: data).scrubbingShownText(of: secrets(of: request)),
            decodingFailure: failure,
            // The decoder's own error quotes the server's values (an echoed token, a 50 MB enum
            // value): its case and coding path, its texts cut and scrubbed.
            underlyingError: DecodingFailure.sanitized(error, sentWith: request, alsoHeaders: [authService.headerField])
        )
    }

    /// Sends `endpoint`, decodes the 2xx body as `Model`, and also returns the response and the
    /// request's ``RequestMetrics``: the timings and sizes of every exchange on the wire (each
    /// redirect hop and each retry) and what the decorators did (retries, refreshes, cache hits).
    ///
    /// Collecting metrics costs a few microseconds per request; ``request(to:via:)`` collects
    /// none unless a logger is enabled. Which figures each transport provides is tabled in the
    /// README ("Observing requests").
    ///
    /// - Throws: What ``requestWithResponse(to:via:)`` throws. A ``NetworkError`` carries the
    ///   request's metrics up to the failure (``NetworkError/metrics``): the exchanges that
    ///   reached the wire, a status error's and a decoding failure's included, and the steps. An
    ///   error before anything was sent (an invalid request) carries none. The metrics of a failed
    ///   request also reach an enabled logger with its ``NetworkLogRecord/Event/failure`` record.
    public func requestWithMetrics<Model: Decodable>(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol
    ) async throws -> (model: Model, response: HTTPURLResponse, metrics: RequestMetrics) {
        let (data, response, request, metrics) = try await observedExchange(
            endpoint, environment, collectMetrics: true)
        do {
            let model = try jsonDecoder.decode(Model.self, from: data)
            return (model, response, metrics ?? RequestMetrics(start: Date(), duration: 0, transactions: [], steps: []))
        } catch {
            throw decodingError(error, modelType: Model.self, response: response, data: data, request: request)
                .attaching(metrics)
        }
    }

    /// Sends `endpoint` and returns the raw 2xx body and response, undecoded.
    ///
    /// - Throws: ``NetworkError`` for a non-2xx status (with the body and headers attached) and
    ///   for transport failures; `CancellationError` when cancelled.
    public func requestData(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol
    ) async throws -> (data: Data, response: HTTPURLResponse) {
        let (data, response, _) = try await exchange(endpoint, environment)
        return (data, response)
    }

    /// ``requestData(to:via:)``, also returning the request as sent (for scrubbing its
    /// credentials from a decoding error).
    private func exchange(
        _ endpoint: any EndpointProtocol, _ environment: any APIEnvironmentProtocol
    ) async throws -> (Data, HTTPURLResponse, URLRequest) {
        let (data, response, request, _) = try await observedExchange(endpoint, environment, collectMetrics: false)
        return (data, response, request)
    }

    /// ``exchange(_:_:)``, also returning the request's metrics when `collectMetrics` is set or
    /// the logger is enabled.
    private func observedExchange(
        _ endpoint: any EndpointProtocol, _ environment: any APIEnvironmentProtocol, collectMetrics: Bool
    ) async throws -> (Data, HTTPURLResponse, URLRequest, RequestMetrics?) {
        let request = try await prepare(endpoint, environment)
        let data: Data
        let response: HTTPURLResponse
        let metrics: RequestMetrics?
        let witness: RequestWitness?
        do {
            ((data, response, metrics), witness) = try await witnessing(request, authorized: endpoint.requiresAuth) {
                try await send(request, bodyLimit: endpoint.maxResponseBytes, collectMetrics: collectMetrics)
            }
        } catch {
            await notifyIfUnauthorized(error)
            throw error
        }
        let sent = request.carryingForScrubbing(witness?.refreshedCredentials ?? [])
        guard (200..<300).contains(response.statusCode) else {
            await notifyIfUnauthorized(status: response.statusCode, from: response.url, for: request, witness: witness)
            throw statusError(response, data: data, request: sent).attaching(collectMetrics ? metrics : nil)
        }
        return (data, response, sent, metrics)
    }

    /// Tells ``invalidationHandler`` when the transport threw a 401 (a ``ReauthTransport`` whose
    /// refresh failed), as it is told about a 401 response; not when the refresh failed for a
    /// transient reason (``ReauthError/isTransient``: the token endpoint unreachable, a 503, the
    /// refresh timeout), which says nothing about the credential.
    func notifyIfUnauthorized(_ error: any Error) async {
        if let error = error as? NetworkError, error.kind == .httpStatusError(.unauthorized),
            (error.underlyingError as? ReauthError)?.isTransient != true
        {
            await invalidationHandler?.handleInvalidToken()
        }
    }

    /// Tells ``invalidationHandler`` about a 401 response from the request's own origin. A 401
    /// from another origin (a redirect there, which carried no credential) says nothing about
    /// the token: signing the user out for it would let any host behind a redirect do so. Nor
    /// does one at the end of a chain that dropped the credential on its way and came back
    /// (`A → B → A`), which `witness` saw.
    func notifyIfUnauthorized(
        status: Int, from url: URL?, for request: URLRequest, witness: RequestWitness?
    ) async {
        guard status == 401, url == nil || Origin.isSameOrigin(request.url, url),
            !(witness?.droppedCredentials ?? false)
        else { return }
        await invalidationHandler?.handleInvalidToken()
    }

    /// Runs `operation` (the exchange of `request`) with a ``RequestWitness`` bound when a 401
    /// would be told to ``invalidationHandler``, or when the request carries the auth service's
    /// credential (`authorized`: a ``ReauthTransport`` below then knows that credential is the
    /// service's, by its header and value). Otherwise it binds nothing: the plain request pays
    /// two checks (a witness costs an allocation and a task-local binding).
    // Inlined: as a call, the extra async frame cost the plain request ~600 instructions
    // (callgrind, `off`: 152,405 against 151,689 inlined).
    @inline(__always)
    func witnessing<T>(
        _ request: URLRequest, authorized: Bool, isolation: isolated (any Actor)? = #isolation,
        _ operation: () async throws -> T
    ) async rethrows -> (T, RequestWitness?) {
        guard invalidationHandler != nil || authorized else { return (try await operation(), nil) }
        let header = authService.headerField
        let (result, witness) = try await RequestWitness.watching(
            request,
            make: { request in
                let value = authorized ? request.value(forHTTPHeaderField: header) : nil
                return RequestWitness(url: request.url, serviceCredential: value.map { (header, $0) })
            }, operation)
        return (result, witness)
    }

    /// The credential values `request` carries, with the auth service's own header: scrubbed
    /// from every log record and error text, wherever a server echoes them.
    func secrets(of request: URLRequest) -> [String] {
        Redactor.credentialValues(of: request, alsoHeaders: [authService.headerField])
    }

    /// Builds the request for `endpoint` and authorizes it when the endpoint requires it.
    func prepare(
        _ endpoint: any EndpointProtocol, _ environment: any APIEnvironmentProtocol
    ) async throws -> URLRequest {
        var request = try EndpointRequestBuilder(jsonEncoder: jsonEncoder).makeRequest(for: endpoint, in: environment)
        if endpoint.requiresAuth {
            do {
                request = try await authService.authorize(request)
            } catch {
                // A caller cancelled while its credentials were fetched (a keychain actor, a
                // token service over the network) gets `CancellationError`, as from every other
                // step; wrapped as `.authorizationFailed`, an app could sign the user out.
                if error is CancellationError || Task.isCancelled { throw CancellationError() }
                throw NetworkError.authorizationFailure(error, url: request.url)
            }
        }
        return request
    }

    /// The error for a non-2xx `response`, with its status, headers and body.
    func statusError(_ response: HTTPURLResponse, data: Data, request: URLRequest) -> NetworkError {
        let snapshot = HTTPErrorResponse(response, body: data).scrubbingShownText(of: secrets(of: request))
        guard let status = HTTPStatusError(statusCode: response.statusCode) else {
            // Unreachable: callers check for 2xx first. A 2xx is not a status error.
            return NetworkError(
                .invalidResponseType, message: "Unexpected HTTP status \(response.statusCode).",
                url: response.url ?? request.url, response: snapshot)
        }
        return NetworkError(
            .httpStatusError(status),
            message:
                "HTTP \(response.statusCode) from \(request.httpMethod ?? "GET") \(Redactor.url(request.url)): "
                + Redactor.bodyExcerpt(data, limit: 256, scrubbing: secrets(of: request)),
            url: response.url ?? request.url, response: snapshot)
    }

    /// The fast path for callers that need only a 2xx body: when the transport can defer
    /// building the `HTTPURLResponse` (``CurlTransport``, and ``PinningTransport``,
    /// ``RetryTransport``, ``ReauthTransport`` and ``ETagTransport`` over any transport), sends
    /// `endpoint` and checks the status
    /// without building it (an enabled logger builds it only if it reads the response record's
    /// headers). `nil` when the fast path does not apply.
    ///
    /// - Throws: What ``requestData(to:via:)`` throws, with the same errors.
    private func sendDeferred(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol
    ) async throws -> (Data, DeferredResponse, URLRequest)? {
        guard let deferredTransport else {
            return nil
        }
        let request = try await prepare(endpoint, environment)
        let data: Data
        let deferred: DeferredResponse
        let witness: RequestWitness?
        do {
            ((data, deferred, _), witness) = try await witnessing(request, authorized: endpoint.requiresAuth) {
                try await transfer(
                    request, bodyLimit: endpoint.maxResponseBytes, collectMetrics: false,
                    deferredTransport: deferredTransport)
            }
        } catch {
            await notifyIfUnauthorized(error)
            throw error
        }
        let sent = request.carryingForScrubbing(witness?.refreshedCredentials ?? [])
        guard (200..<300).contains(deferred.statusCode) else {
            await notifyIfUnauthorized(status: deferred.statusCode, from: deferred.url, for: request, witness: witness)
            throw statusError(try fullResponse(deferred, request), data: data, request: sent)
        }
        return (data, deferred, sent)
    }

    /// The deferred response, built; a failure to build it is a transport error.
    private func fullResponse(_ deferred: DeferredResponse, _ request: URLRequest) throws -> HTTPURLResponse {
        do {
            return try deferred.response()
        } catch {
            throw mapped(error, request: request)
        }
    }

    /// Sends a prepared request through the transport, with logging and error mapping.
    ///
    /// `bodyLimit` is the endpoint's ``EndpointProtocol/maxResponseBytes``, applied to the whole
    /// transport stack for this call; `nil` leaves the transport's limit.
    ///
    /// The request is observed (its ``RequestMetrics`` collected, its steps logged as they
    /// happen) when the logger is enabled or `collectMetrics` is set; otherwise nothing is
    /// collected.
    private func send(
        _ request: URLRequest, bodyLimit: Int64?, collectMetrics: Bool = false
    ) async throws -> (Data, HTTPURLResponse, RequestMetrics?) {
        let (data, deferred, metrics) = try await transfer(
            request, bodyLimit: bodyLimit, collectMetrics: collectMetrics, deferredTransport: nil)
        return (data, try fullResponse(deferred, request), metrics)
    }

    /// ``send(_:bodyLimit:collectMetrics:)``, through `deferredTransport` when there is one (the
    /// response is then built only when someone asks for it).
    private func transfer(
        _ request: URLRequest, bodyLimit: Int64?, collectMetrics: Bool,
        deferredTransport: (any DeferredResponseTransport)?
    ) async throws -> (Data, DeferredResponse, RequestMetrics?) {
        let log = NetworkLogSession(logger: logger, request: request, alsoHeaders: [authService.headerField])
        // Metrics are collected for the logger's records (scrubbed of the request's credential
        // values when read) or for the caller who asked for them (who made the request: its URLs
        // are redacted of query values and user info, not scrubbed).
        let recorder = log != nil || collectMetrics ? ExchangeRecorder(log: log) : nil
        do {
            let (data, response) = try await ExchangeRecorder.observing(recorder) {
                try await Origin.withCredentialHeader(authService.headerField) {
                    if let bodyLimit {
                        try await ResponseLimits.withMaxBodyBytes(bodyLimit) {
                            try await callTransport(request, deferredTransport: deferredTransport)
                        }
                    } else {
                        try await callTransport(request, deferredTransport: deferredTransport)
                    }
                }
            }
            let metrics = recorder?.snapshot()
            log?.response(response, body: data, metrics: metrics)
            return (data, response, metrics)
        } catch {
            let metrics = recorder?.snapshot()
            log?.failure(error, metrics: metrics)
            let failure = mapped(error, request: request)
            // The caller who asked for metrics gets them with the error too.
            if collectMetrics, let failure = failure as? NetworkError { throw failure.attaching(metrics) }
            throw failure
        }
    }

    /// One call to the transport.
    private func callTransport(
        _ request: URLRequest, deferredTransport: (any DeferredResponseTransport)?
    ) async throws -> (Data, DeferredResponse) {
        if let deferredTransport {
            return try await deferredTransport.deferredData(for: request)
        }
        let (data, response) = try await transport.data(for: request)
        return (data, DeferredResponse(response))
    }

    /// A transport's error as the service throws it: `CancellationError`, a ``NetworkError``, or
    /// (from a custom transport) the error unchanged.
    func mapped(_ error: any Error, request: URLRequest) -> any Error {
        if error is CancellationError || Task.isCancelled && !(error is NetworkError) {
            return CancellationError()
        }
        if let error = error as? NetworkError { return error }
        if let error = error as? TransportError {
            switch error.code {
            case .invalidRequest:
                return NetworkError(.invalidRequest, message: error.message, url: request.url, underlyingError: error)
            case .authenticationFailed:
                // The 401 with the refresh's failure attached, as the status error it is.
                let response = error.response?.scrubbingShownText(of: secrets(of: request))
                return NetworkError(
                    .httpStatusError(.unauthorized), message: error.message, url: error.response?.url ?? request.url,
                    response: response, underlyingError: error.underlyingError ?? error.replacingResponse(response))
            case .unexpectedNotModified:
                let response = error.response?.scrubbingShownText(of: secrets(of: request))
                return NetworkError(
                    .unexpectedNotModified, message: error.message, url: error.response?.url ?? request.url,
                    response: response, underlyingError: error.replacingResponse(response))
            default:
                break
            }
            return NetworkError(
                .transport(error.code), message: error.message, url: request.url, underlyingError: error)
        }
        if let error = error as? URLError {
            let mapped = TransportError.map(error, url: request.url)
            if mapped is CancellationError { return CancellationError() }
            if let mapped = mapped as? TransportError {
                return NetworkError(
                    .transport(mapped.code), message: mapped.message, url: request.url, underlyingError: mapped)
            }
        }
        return error
    }
}

extension URLRequest {
    /// The name under which ``carryingForScrubbing(_:)`` keeps a refreshed credential: secret by
    /// its name, so ``Redactor/credentialValues(of:alsoHeaders:)`` finds it.
    static let refreshedCredentialField = "X-Gentle-Refreshed-Credential"

    /// This request as the service judges its error texts by: the credentials it was sent with
    /// after a refresh (`values`) are added under ``refreshedCredentialField``, so a server that
    /// echoes one has it scrubbed as the first credential is. For error texts only: such a
    /// request is never sent. The request itself when `values` is empty (nearly always).
    func carryingForScrubbing(_ values: [String]) -> URLRequest {
        guard !values.isEmpty else { return self }
        var copy = self
        for (index, value) in values.enumerated() {
            copy.setValue(value, forHTTPHeaderField: "\(Self.refreshedCredentialField)-\(index + 1)")
        }
        return copy
    }
}
