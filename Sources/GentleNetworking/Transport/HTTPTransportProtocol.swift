import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends one `URLRequest` and returns the response: the seam that every transport, real or
/// canned, and every decorator (retry, re-auth, caching) plugs into.
///
/// Conformers must:
/// - return any HTTP status as a response (a 404 is not a thrown error);
/// - throw `CancellationError` when the calling task is cancelled, promptly;
/// - throw ``TransportError`` when no HTTP response was received.
public protocol HTTPTransportProtocol: Sendable {
    /// Sends `request` and returns the response body and metadata.
    func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse)
}

/// The transport ``HTTPNetworkService`` uses when none is given.
public enum DefaultTransport {
    /// A new instance of the platform's default transport: ``URLSessionTransport`` over
    /// `URLSession.shared`.
    public static func make() -> any HTTPTransportProtocol {
        URLSessionTransport()
    }
}
