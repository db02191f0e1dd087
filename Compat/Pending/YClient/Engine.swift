// Pending: an engine written to the seed's NetworkEngine protocol. Ours differs on purpose:
// - transfers are `download(_:progress:)`/`upload(...)` (async, with progress) instead of the
//   seed's delegate-driven `submitBackgroundDownload(_:)`/`submitBackgroundUpload(_:fileUrl:)`;
// - the protocol is `Sendable`, so a class with unprotected mutable state is an error in the
//   Swift 6 mode (a warning in Swift 5).
// Moved into Sources/YClient when NetworkEngine accepts the seed's shape.
import Foundation
import YNetwork

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An engine of the app's own, written to the seed's protocol.
public final class RecordingEngine: NetworkEngine {
    public private(set) var requests: [URLRequest] = []
    private var session: URLSession = .shared

    public init() {}

    public func configure(with configuration: NetworkEngineConfiguration) {
        session = URLSession(configuration: .ephemeral, delegate: configuration.sessionDelegate, delegateQueue: nil)
    }

    public func submit(_ request: URLRequest) async throws -> (Data, URLResponse) {
        requests.append(request)
        return try await session.data(for: request)
    }

    public func submitBackgroundDownload(_ request: URLRequest) throws -> Cancelable {
        return session.downloadTask(with: request)
    }

    public func submitBackgroundUpload(_ request: URLRequest, fileUrl: URL) throws -> Cancelable {
        return session.uploadTask(with: request, fromFile: fileUrl)
    }
}
