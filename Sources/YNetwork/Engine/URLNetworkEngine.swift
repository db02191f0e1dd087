import Foundation
import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The default ``NetworkEngine``: requests go through a GentleNetworking transport, so
/// ``RetryTransport``, ``ReauthTransport``, ``ETagTransport`` and ``PinningTransport`` stacks
/// apply to Y-Network requests too.
///
/// - Requests: the given transport; by default the platform's (libcurl on Linux,
///   `URLSession` on Apple platforms), or a `URLSession` with the configuration's
///   ``NetworkEngineConfiguration/sessionDelegate`` when one is set.
/// - Downloads and uploads: the given file-transfer transport; by default libcurl on Linux
///   (constant memory, progress as bytes move). Without one: a background `URLSession` on Apple
///   platforms; elsewhere the body goes through memory and progress is reported once, at the end.
public final class URLNetworkEngine: NetworkEngine, @unchecked Sendable {
    // @unchecked: `transport` is behind `lock`; the rest is immutable.
    private let givenTransport: (any HTTPTransportProtocol)?
    private let fileTransport: (any FileTransferTransport)?
    private let lock = NSLock()
    private var configuredTransport: (any HTTPTransportProtocol)?

    /// Creates an engine.
    ///
    /// - Parameters:
    ///   - transport: The transport (or decorator stack) for requests; `nil` (the default) for
    ///     the platform's default, or a delegate-backed `URLSession` once configured with a
    ///     session delegate.
    ///   - fileTransport: The transport for downloads and uploads; by default the platform's
    ///     (`CurlTransport` on Linux, none elsewhere).
    public init(
        transport: (any HTTPTransportProtocol)? = nil,
        fileTransport: (any FileTransferTransport)? = DefaultTransport.makeFileTransfer()
    ) {
        self.givenTransport = transport
        self.fileTransport = fileTransport
    }

    /// Builds the `URLSession` transport when the configuration has a session delegate and no
    /// transport was given.
    public func configure(with configuration: NetworkEngineConfiguration) {
        guard givenTransport == nil, let delegate = configuration.sessionDelegate else { return }
        let sessionConfiguration = URLSessionConfiguration.default
        sessionConfiguration.httpAdditionalHeaders = configuration.headers
        if configuration.timeoutInterval > 0 {
            sessionConfiguration.timeoutIntervalForRequest = configuration.timeoutInterval
        }
        if let policy = configuration.cachePolicy { sessionConfiguration.requestCachePolicy = policy }
        let session = URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: nil)
        lock.lock()
        configuredTransport = URLSessionTransport(session: session)
        lock.unlock()
    }

    private var transport: any HTTPTransportProtocol {
        lock.lock()
        defer { lock.unlock() }
        return givenTransport ?? configuredTransport ?? DefaultTransport.make()
    }

    /// Sends `request` through the transport.
    public func submit(_ request: URLRequest) async throws -> (Data, URLResponse) {
        let (data, response) = try await transport.data(for: request)
        return (data, response)
    }

    /// Downloads through the file-transfer transport, else a background session (Apple) or memory.
    public func download(
        _ request: URLRequest, to destination: URL, progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> URLResponse {
        if let fileTransport {
            return try await fileTransport.download(for: request, to: destination, progress: progress)
        }
        #if canImport(Darwin)
            return try await BackgroundTransferSession.shared.download(request, to: destination, progress: progress)
        #else
            let (data, response) = try await transport.data(for: request)
            try data.write(to: destination, options: .atomic)
            let size = Int64(data.count)
            progress?(
                TransferProgress(
                    bytesReceived: size, expectedBytesToReceive: size, bytesSent: 0, expectedBytesToSend: 0))
            return response
        #endif
    }

    /// Uploads through the file-transfer transport, else a background session (Apple) or memory.
    public func upload(
        _ request: URLRequest, fromFile file: URL, progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> (Data, URLResponse) {
        if let fileTransport {
            let (data, response) = try await fileTransport.upload(for: request, fromFile: file, progress: progress)
            return (data, response)
        }
        #if canImport(Darwin)
            return try await BackgroundTransferSession.shared.upload(request, fromFile: file, progress: progress)
        #else
            var inMemory = request
            inMemory.httpBody = try Data(contentsOf: file)
            let (data, response) = try await transport.data(for: inMemory)
            let size = Int64(inMemory.httpBody?.count ?? 0)
            progress?(
                TransferProgress(
                    bytesReceived: Int64(data.count), expectedBytesToReceive: Int64(data.count), bytesSent: size,
                    expectedBytesToSend: size))
            return (data, response)
        #endif
    }
}
