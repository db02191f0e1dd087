import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The service API, as a protocol so view models can depend on it and tests can replace it.
public protocol NetworkServiceProtocol: Sendable {
    /// Sends `endpoint` and decodes the 2xx body as `Model`.
    func request<Model: Decodable>(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol
    ) async throws -> Model
    /// Sends `endpoint` and decodes the 2xx body as a top-level JSON array of `Model`.
    func requestModels<Model: Decodable>(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol
    ) async throws -> [Model]
    /// Sends `endpoint` and ignores the body of a 2xx response; returns the status it got.
    @discardableResult
    func requestVoid(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol
    ) async throws -> NetworkServiceEmptyResponseResult
}
