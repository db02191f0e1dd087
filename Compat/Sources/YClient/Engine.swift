// An engine written to the seed's NetworkEngine protocol: configure, submit and the two
// delegate-driven transfers. Our protocol is Sendable, so in the Swift 6 mode a class with
// mutable state must protect it (a lock) and say so (`@unchecked Sendable`); the Swift 5 branch
// is the seed's code as it was, which compiles with a warning ("stored property 'requests' of
// 'Sendable'-conforming class is mutable; this is an error in the Swift 6 language mode").
import Foundation
import YNetwork

#if swift(>=6)
    /// An engine of the app's own, written to the seed's protocol.
    public final class RecordingEngine: NetworkEngine, @unchecked Sendable {
        private let lock = NSLock()
        private var recorded: [URLRequest] = []
        private var session: URLSession = .shared

        public init() {}

        public var requests: [URLRequest] { lock.withLock { recorded } }

        public func configure(with configuration: NetworkEngineConfiguration) {
            let sessionConfiguration = URLSessionConfiguration.ephemeral
            sessionConfiguration.protocolClasses = [URLProtocolStub.self]
            let made = URLSession(
                configuration: sessionConfiguration, delegate: configuration.sessionDelegate, delegateQueue: nil)
            lock.withLock { session = made }
        }

        public func submit(_ request: URLRequest) async throws -> (Data, URLResponse) {
            let session = lock.withLock { () -> URLSession in
                recorded.append(request)
                return self.session
            }
            return try await session.data(for: request)
        }

        public func submitBackgroundDownload(_ request: URLRequest) throws -> Cancelable {
            return lock.withLock { session.downloadTask(with: request) }
        }

        public func submitBackgroundUpload(_ request: URLRequest, fileUrl: URL) throws -> Cancelable {
            return lock.withLock { session.uploadTask(with: request, fromFile: fileUrl) }
        }
    }
#else
    /// An engine of the app's own, written to the seed's protocol.
    public final class RecordingEngine: NetworkEngine {
        public private(set) var requests: [URLRequest] = []
        private var session: URLSession = .shared

        public init() {}

        public func configure(with configuration: NetworkEngineConfiguration) {
            let sessionConfiguration = URLSessionConfiguration.ephemeral
            sessionConfiguration.protocolClasses = [URLProtocolStub.self]
            session = URLSession(
                configuration: sessionConfiguration, delegate: configuration.sessionDelegate, delegateQueue: nil)
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
#endif

/// A manager on the recording engine, as an app wires its own engine.
public func makeRecordingManager(_ engine: RecordingEngine) -> NetworkManager {
    let manager = NetworkManager()
    manager.configure(with: NetworkManagerConfiguration(basePath: "https://api.example.com", networkEngine: engine))
    return manager
}
