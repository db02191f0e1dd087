import Foundation
import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What sends a ``NetworkManager``'s requests; ``URLNetworkEngine`` by default.
///
/// Unlike the original Y-Network protocol, transfers are `async` and report progress through a
/// closure, which works the same on Linux (libcurl) and Apple platforms.
public protocol NetworkEngine: Sendable {
    /// Called by ``NetworkManager/configure(with:sessionManager:)``.
    func configure(with configuration: NetworkEngineConfiguration)

    /// Sends `request` and returns the body and response (any status).
    func submit(_ request: URLRequest) async throws -> (Data, URLResponse)

    /// Downloads the body of `request` into `destination`, reporting progress.
    func download(
        _ request: URLRequest, to destination: URL, progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> URLResponse

    /// Sends the file at `file` as the body of `request`, reporting progress; returns the
    /// response body and response.
    func upload(
        _ request: URLRequest, fromFile file: URL, progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> (Data, URLResponse)
}
