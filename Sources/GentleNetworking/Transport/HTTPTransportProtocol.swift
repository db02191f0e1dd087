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

    /// Sends `request` and returns as soon as the response head is in, with the body as an
    /// ``HTTPByteStream`` of chunks as they arrive (any status, as ``data(for:)``).
    ///
    /// The default implementation reads the whole body with ``data(for:)`` first and streams it
    /// as one chunk, so every transport can be streamed from; ``CurlTransport`` streams natively,
    /// with backpressure, and the decorators pass streams through.
    func stream(for request: URLRequest) async throws -> (HTTPByteStream, HTTPURLResponse)
}

extension HTTPTransportProtocol {
    /// The whole body through ``data(for:)``, then streamed as one chunk.
    public func stream(for request: URLRequest) async throws -> (HTTPByteStream, HTTPURLResponse) {
        let (data, response) = try await data(for: request)
        return (.single(data), response)
    }
}

/// The transport ``HTTPNetworkService`` (and every decorator) uses when none is given.
public enum DefaultTransport {
    /// The platform's default transport.
    ///
    /// - On Linux: the shared `CurlTransport` (one connection pool and one event-loop thread for
    ///   the whole process), several times faster than corelibs' URLSession and able to pin.
    ///   Should libcurl fail to initialize, ``URLSessionTransport`` over `URLSession.shared`.
    /// - On Apple platforms: ``URLSessionTransport`` over `URLSession.shared`.
    public static func make() -> any HTTPTransportProtocol {
        #if canImport(CCurl)
            if let shared = CurlTransport.shared { return shared }
        #endif
        return URLSessionTransport()
    }
}
