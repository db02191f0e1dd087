import Foundation
import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``NetworkEngine`` for tests: a `URLSession` whose requests are answered by
/// ``URLProtocolStub`` (or the protocol classes you give), so nothing reaches the network.
///
/// ```swift
/// let manager = NetworkManager()
/// manager.configure(with: NetworkManagerConfiguration(networkEngine: URLProtocolStubNetworkEngine()))
/// URLProtocolStub.appendStub(withData: Data("{}".utf8), statusCode: 200)
/// ```
///
/// ``NetworkManager/configure(with:sessionManager:)`` configures it; until then every call
/// throws ``NetworkError/notConfigured``. Downloads and uploads are data tasks here (the stub
/// answers them the same way): a download writes the body to the destination (owner-only), an
/// upload sends the file as the body; progress is reported once, when the body has arrived.
public final class URLProtocolStubNetworkEngine: NetworkEngine, @unchecked Sendable {
    // @unchecked: `session` and `autoResumes` are behind `lock`; `protocolClasses` is immutable.

    /// The protocol classes registered in the session; `[URLProtocolStub.self]` by default.
    public let protocolClasses: [AnyClass]
    private let lock = NSLock()
    private var configuredSession: URLSession?
    private var autoResumes = true

    /// Creates an unconfigured engine.
    ///
    /// - Parameter protocolClasses: The `URLProtocol` classes that answer requests;
    ///   `[URLProtocolStub.self]` by default. An empty list lets requests reach the network.
    public init(protocolClasses: [AnyClass] = [URLProtocolStub.self]) {
        self.protocolClasses = protocolClasses
    }

    deinit {
        configuredSession?.invalidateAndCancel()
    }

    /// The session, or `nil` until ``configure(with:)``.
    public var session: URLSession? {
        lock.withLock { configuredSession }
    }

    /// Whether downloads and uploads start at once; `true` by default.
    ///
    /// When `false`, a download or upload waits without sending anything until its task is
    /// cancelled, and then fails with `CancellationError` (which the manager passes on as `URLError(.cancelled)`) (for testing cancellation: cancel the
    /// ``Cancelable`` that ``NetworkManager`` returned). Plain requests are not affected.
    public var autoResumesBackgroundTasks: Bool {
        get { lock.withLock { autoResumes } }
        set { lock.withLock { autoResumes = newValue } }
    }

    /// Makes a new session with ``protocolClasses`` and the configuration's session delegate,
    /// timeout and cache policy (its headers are on every request already); the previous
    /// session, if any, is invalidated.
    public func configure(with configuration: NetworkEngineConfiguration) {
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.protocolClasses = protocolClasses
        // The configuration's headers are not copied into the session: every request already
        // carries them (RequestAssembler), and a session adds its headers to every hop, so a
        // credential header stripped for a redirect to another origin came back there.
        // The timeout is clamped: corelibs converts it to whole milliseconds as an Int.
        if let timeout = Clamp.timeout(configuration.timeoutInterval) {
            sessionConfiguration.timeoutIntervalForRequest = timeout
        }
        if let policy = configuration.cachePolicy { sessionConfiguration.requestCachePolicy = policy }
        let session = URLSession(
            configuration: sessionConfiguration, delegate: configuration.sessionDelegate, delegateQueue: nil)
        let previous = lock.withLock {
            defer { configuredSession = session }
            return configuredSession
        }
        previous?.invalidateAndCancel()
    }

    /// Sends `request` through the session.
    ///
    /// - Throws: ``NetworkError/notConfigured`` before ``configure(with:)``; the stubbed error;
    ///   ``NetworkError/invalidResponse`` when no result is queued; `CancellationError`.
    public func submit(_ request: URLRequest) async throws -> (Data, URLResponse) {
        guard let session else { throw NetworkError.notConfigured }
        return try await Self.exchange(request, on: session)
    }

    /// Sends `request` and writes the body to `destination` (replacing it, mode `0600`).
    public func download(
        _ request: URLRequest, to destination: URL, progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> URLResponse {
        guard let session else { throw NetworkError.notConfigured }
        let destinationPath = try TransportError.downloadDestinationPath(destination, request: request.url)
        try await waitUnlessAutoResuming()
        let (data, response) = try await Self.exchange(request, on: session)
        // Replaced by a rename once written: a failed write leaves the old file as it was.
        try AtomicFile.writeDownload(data, to: destinationPath)
        progress?(
            TransferProgress(
                bytesReceived: Int64(data.count), expectedBytesToReceive: Int64(data.count), bytesSent: 0,
                expectedBytesToSend: 0))
        return response
    }

    /// Sends `request` with the file at `file` as its body.
    public func upload(
        _ request: URLRequest, fromFile file: URL, progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> (Data, URLResponse) {
        guard let session else { throw NetworkError.notConfigured }
        try await waitUnlessAutoResuming()
        guard file.isFileURL else {
            throw TransportError.notAFileURL(file, role: "upload source", request: request.url)
        }
        // Only a regular file, at most RequestBodyStream.maxBytes: /dev/zero or a FIFO would
        // be read until memory ran out, or hold the thread in open(2).
        let body = try RegularFile.contents(
            file.localFilePath ?? file.path, limit: RequestBodyStream.maxBytes, request: request.url)
        // A GET goes as POST, as through every other engine.
        let result = try await Self.exchange(RequestValidator.upload(request, body: body), on: session)
        progress?(
            TransferProgress(
                bytesReceived: 0, expectedBytesToReceive: nil, bytesSent: Int64(body.count),
                expectedBytesToSend: Int64(body.count)))
        return result
    }

    /// Waits for cancellation when ``autoResumesBackgroundTasks`` is `false`.
    private func waitUnlessAutoResuming() async throws {
        while !autoResumesBackgroundTasks {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
    }

    private static func exchange(_ request: URLRequest, on session: URLSession) async throws -> (Data, URLResponse) {
        // A request that reaches corelibs (no protocol class takes it) with a timeout it
        // converts to an integer (infinity, NaN, 1e300) trapped the process.
        let request = Clamp.sessionSafeTimeout(request)
        let box = Locked<URLSessionDataTask?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        let cancelled = (error as? URLError)?.code == .cancelled
                        continuation.resume(throwing: cancelled ? CancellationError() : error)
                    } else if let response {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: NetworkError.invalidResponse)
                    }
                }
                box.withLock { $0 = task }
                task.resume()
                if Task.isCancelled { task.cancel() }
            }
        } onCancel: {
            box.current?.cancel()
        }
    }
}
