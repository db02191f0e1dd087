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

    /// Creates a service. Every argument has a default, so `HTTPNetworkService()` works.
    ///
    /// - Parameters:
    ///   - transport: The platform's default transport (see ``DefaultTransport``) by default.
    ///   - authService: ``SystemKeyChainAuthService`` by default.
    ///   - jsonDecoder: A plain `JSONDecoder` by default.
    ///   - jsonEncoder: A plain `JSONEncoder` by default.
    ///   - logger: ``NoOpNetworkLogger`` by default.
    public init(
        transport: any HTTPTransportProtocol = DefaultTransport.make(),
        authService: any AuthServiceProtocol = SystemKeyChainAuthService(),
        jsonDecoder: JSONDecoder = JSONDecoder(),
        jsonEncoder: JSONEncoder = JSONEncoder(),
        logger: any NetworkLogger = NoOpNetworkLogger()
    ) {
        self.transport = transport
        self.authService = authService
        self.jsonDecoder = jsonDecoder
        self.jsonEncoder = jsonEncoder
        self.logger = logger
    }

    /// Sends `endpoint` and decodes the 2xx body as `Model`.
    ///
    /// - Throws: ``NetworkError`` (status, decoding, URL, transport failures) or
    ///   `CancellationError`. Errors of other types thrown by a custom transport pass through
    ///   unchanged.
    public func request<Model: Decodable>(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol
    ) async throws -> Model {
        try await requestWithResponse(to: endpoint, via: environment).model
    }

    /// Sends `endpoint` and decodes the 2xx body as a top-level JSON array of `Model`.
    public func requestModels<Model: Decodable>(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol
    ) async throws -> [Model] {
        try await requestWithResponse(to: endpoint, via: environment).model
    }

    /// Sends `endpoint`, checks for a 2xx status and ignores the body (204 and empty bodies
    /// included).
    public func requestVoid(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol
    )
        async throws
    {
        _ = try await requestData(to: endpoint, via: environment)
    }

    /// Sends `endpoint`, decodes the 2xx body as `Model`, and also returns the response, for
    /// callers that need headers (pagination links, rate-limit counters) or the exact status.
    public func requestWithResponse<Model: Decodable>(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol
    ) async throws -> (model: Model, response: HTTPURLResponse) {
        let (data, response) = try await requestData(to: endpoint, via: environment)
        do {
            return (try jsonDecoder.decode(Model.self, from: data), response)
        } catch {
            let failure = DecodingFailure.from(
                error, modelType: String(describing: Model.self), statusCode: response.statusCode, body: data)
            let decodingError = NetworkError(
                .decodingFailed, message: failure.description, url: response.url,
                response: HTTPErrorResponse(response, body: data), decodingFailure: failure, underlyingError: error)
            throw decodingError
        }
    }

    /// Sends `endpoint` and returns the raw 2xx body and response, undecoded.
    ///
    /// - Throws: ``NetworkError`` for a non-2xx status (with the body and headers attached) and
    ///   for transport failures; `CancellationError` when cancelled.
    public func requestData(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol
    ) async throws -> (data: Data, response: HTTPURLResponse) {
        var request = try EndpointRequestBuilder(jsonEncoder: jsonEncoder).makeRequest(for: endpoint, in: environment)
        if endpoint.requiresAuth {
            do {
                request = try await authService.authorize(request)
            } catch {
                throw NetworkError(
                    .authorizationFailed, message: "The auth service could not provide credentials: \(error)",
                    url: request.url, underlyingError: error)
            }
        }
        let (data, response) = try await send(request)
        guard (200..<300).contains(response.statusCode) else {
            let snapshot = HTTPErrorResponse(response, body: data)
            guard let status = HTTPStatusError(statusCode: response.statusCode) else {
                throw NetworkError(
                    .invalidResponseType, message: "Unexpected HTTP status \(response.statusCode).",
                    url: response.url ?? request.url, response: snapshot)
            }
            throw NetworkError(
                .httpStatusError(status),
                message:
                    "HTTP \(response.statusCode) from \(request.httpMethod ?? "GET") \(Redactor.url(request.url)): "
                    + Redactor.bodyExcerpt(data, limit: 256),
                url: response.url ?? request.url, response: snapshot)
        }
        return (data, response)
    }

    /// Sends a prepared request through the transport, with logging and error mapping.
    private func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let logging = logger.isEnabled
        if logging { logger.log(.request(request)) }
        let start = DispatchTime.now().uptimeNanoseconds
        func elapsed() -> TimeInterval {
            TimeInterval(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000_000
        }
        do {
            let (data, response) = try await transport.data(for: request)
            if logging { logger.log(.response(response, body: data, request: request, duration: elapsed())) }
            return (data, response)
        } catch {
            if logging { logger.log(.failure(error, request: request, duration: elapsed())) }
            if error is CancellationError || Task.isCancelled && !(error is NetworkError) {
                throw CancellationError()
            }
            if let error = error as? NetworkError { throw error }
            if let error = error as? TransportError {
                throw NetworkError(
                    .transport(error.code), message: error.message, url: request.url, underlyingError: error)
            }
            if let error = error as? URLError {
                let mapped = TransportError.map(error, url: request.url)
                if mapped is CancellationError { throw CancellationError() }
                if let mapped = mapped as? TransportError {
                    throw NetworkError(
                        .transport(mapped.code), message: mapped.message, url: request.url, underlyingError: mapped)
                }
            }
            throw error
        }
    }
}
