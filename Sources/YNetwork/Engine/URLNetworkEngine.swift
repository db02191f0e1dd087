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
/// - Downloads, uploads and multipart bodies above 10 MiB never bypass a given transport:
///   - a given `fileTransport`, or a given transport that is a ``FileTransferTransport``
///     (``CurlTransport``, ``PinningTransport``), streams them with constant memory;
///   - any other given transport (a decorator stack) carries them through memory, so its
///     retries, credentials and pins still apply; progress is reported once, at the end;
///   - with no transport given: libcurl on Linux, a background `URLSession` on Apple platforms.
///
/// Open, as in Y-Network, so tests can subclass it (a subclass restates `@unchecked Sendable`
/// if it adds state, and protects that state itself).
open class URLNetworkEngine: NetworkEngine, @unchecked Sendable {
    // @unchecked: `configuredSession` and `configuredTransport` are behind `lock`; the rest is
    // immutable.
    private let givenTransport: (any HTTPTransportProtocol)?
    private let fileTransport: (any FileTransferTransport)?
    private let usesPlatformTransfers: Bool
    /// The background session's identifier (Apple platforms); see ``init(transport:fileTransport:backgroundSessionIdentifier:)``.
    public let backgroundSessionIdentifier: String
    private let lock = NSLock()
    private var configuredSession: URLSession?
    private var configuredTransport: (any HTTPTransportProtocol)?

    /// Creates an engine.
    ///
    /// - Parameters:
    ///   - transport: The transport (or decorator stack) for requests; `nil` (the default) for
    ///     the platform's default, or a delegate-backed `URLSession` once configured with a
    ///     session delegate.
    ///   - fileTransport: The transport for downloads, uploads and large multipart bodies;
    ///     `nil` (the default) derives it from `transport` as described above.
    ///   - backgroundSessionIdentifier: Apple platforms, no transport given: the identifier of
    ///     the background `URLSession` that carries downloads and uploads. `nil` (the default) or
    ///     empty: the bundle identifier followed by `.gentle.ynetwork.background`. Engines with
    ///     the same identifier share one session (a process may have only one per identifier);
    ///     keep it the same across launches so the system can hand a relaunched app its transfers.
    ///     Not used on Linux.
    public init(
        transport: (any HTTPTransportProtocol)? = nil, fileTransport: (any FileTransferTransport)? = nil,
        backgroundSessionIdentifier: String? = nil
    ) {
        self.givenTransport = transport
        if let backgroundSessionIdentifier, !backgroundSessionIdentifier.isEmpty {
            self.backgroundSessionIdentifier = backgroundSessionIdentifier
        } else {
            self.backgroundSessionIdentifier = Self.defaultBackgroundSessionIdentifier
        }
        if let fileTransport {
            self.fileTransport = fileTransport
            self.usesPlatformTransfers = false
        } else if let transport {
            self.fileTransport = transport as? any FileTransferTransport
            self.usesPlatformTransfers = false
        } else {
            self.fileTransport = DefaultTransport.makeFileTransfer()
            self.usesPlatformTransfers = true
        }
    }

    deinit {
        configuredSession?.finishTasksAndInvalidate()
    }

    /// The identifier of the background `URLSession` (Apple platforms) when none is given: the
    /// main bundle's identifier followed by `.gentle.ynetwork.background`
    /// (`gentle.ynetwork.background` in a process without one). Stable across launches, so the
    /// system can hand a relaunched app the transfers it started.
    public static var defaultBackgroundSessionIdentifier: String {
        let suffix = "gentle.ynetwork.background"
        guard let bundle = Bundle.main.bundleIdentifier, !bundle.isEmpty else { return suffix }
        return bundle + "." + suffix
    }

    /// Builds the `URLSession` transport when the configuration has a session delegate and no
    /// transport was given; a later configuration replaces it (the old session finishes its
    /// tasks and is invalidated, releasing its delegate).
    open func configure(with configuration: NetworkEngineConfiguration) {
        var session: URLSession?
        if givenTransport == nil, let delegate = configuration.sessionDelegate {
            let sessionConfiguration = URLSessionConfiguration.default
            // The configuration's headers are not copied into the session: every request already
            // carries them (RequestAssembler), and a session adds its headers to every hop, so a
            // credential header stripped for a redirect to another origin came back there.
            // The timeout is clamped: corelibs converts it to whole milliseconds as an Int.
            if let timeout = Clamp.timeout(configuration.timeoutInterval) {
                sessionConfiguration.timeoutIntervalForRequest = timeout
            }
            if let policy = configuration.cachePolicy { sessionConfiguration.requestCachePolicy = policy }
            session = URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: nil)
        }
        lock.lock()
        let previous = configuredSession
        configuredSession = session
        configuredTransport = session.map { URLSessionTransport(session: $0) }
        lock.unlock()
        previous?.finishTasksAndInvalidate()
    }

    private var transport: any HTTPTransportProtocol {
        lock.lock()
        defer { lock.unlock() }
        return givenTransport ?? configuredTransport ?? DefaultTransport.make()
    }

    /// Sends `request` through the transport.
    open func submit(_ request: URLRequest) async throws -> (Data, URLResponse) {
        let (data, response) = try await transport.data(for: request)
        return (data, response)
    }

    /// Downloads through the file-transfer transport, else a background session (Apple, no
    /// transport given) or the transport, through memory.
    open func download(
        _ request: URLRequest, to destination: URL, progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> URLResponse {
        try await download(request, to: destination, maxBytes: nil, progress: progress)
    }

    /// ``download(_:to:progress:)`` stopped at `maxBytes` of 2xx body (`nil` for no limit) on
    /// every path: libcurl's file sink, the background session (Apple), or the in-memory body
    /// limit of `data(for:)`.
    open func download(
        _ request: URLRequest, to destination: URL, maxBytes: Int64?,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> URLResponse {
        // Checked here for every path (a file-transfer transport of the app's own too), before
        // anything is sent.
        _ = try TransportError.downloadDestinationPath(destination, request: request.url)
        if let fileTransport {
            return try await fileTransport.download(
                for: request, to: destination, maxBytes: maxBytes, progress: progress)
        }
        #if canImport(Darwin) || GENTLE_APPLE_TYPECHECK
            if usesPlatformTransfers {
                return try await BackgroundTransferSession.download(
                    request, to: destination, maxBytes: maxBytes, identifier: backgroundSessionIdentifier,
                    progress: progress)
            }
        #endif
        return try await transport.downloadThroughMemory(
            for: request, to: destination, maxBytes: maxBytes, progress: progress)
    }

    /// Uploads through the file-transfer transport, else a background session (Apple, no
    /// transport given) or the transport, through memory.
    open func upload(
        _ request: URLRequest, fromFile file: URL, progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> (Data, URLResponse) {
        guard file.isFileURL else {
            throw TransportError.notAFileURL(file, role: "upload source", request: request.url)
        }
        if let fileTransport {
            let (data, response) = try await fileTransport.upload(for: request, fromFile: file, progress: progress)
            return (data, response)
        }
        #if canImport(Darwin) || GENTLE_APPLE_TYPECHECK
            if usesPlatformTransfers {
                return try await BackgroundTransferSession.upload(
                    request, fromFile: file, identifier: backgroundSessionIdentifier, progress: progress)
            }
        #endif
        let (data, response) = try await transport.uploadThroughMemory(for: request, fromFile: file, progress: progress)
        return (data, response)
    }

    /// Starts a download task on the delegate session, as Y-Network does: its progress, file and
    /// completion go to the ``NetworkEngineConfiguration/sessionDelegate`` given to
    /// ``configure(with:)``. The task is resumed and returned.
    ///
    /// The request is checked first (method, header names and values, `http`/`https` only, a
    /// `Content-Length` that contradicts the body). It goes
    /// through that `URLSession`, so the response limits and deadlines of the GentleNetworking
    /// transports do not apply; ``NetworkManager``'s transfers (``download(_:to:progress:)``)
    /// have them.
    ///
    /// - Throws: ``NetworkError/notConfigured`` without a delegate session (not configured with
    ///   a session delegate, or created with a transport, whose stack must not be bypassed);
    ///   a `TransportError` for a request that may not be sent.
    @discardableResult
    open func submitBackgroundDownload(_ request: URLRequest) throws -> Cancelable {
        let (session, sent) = try delegateSession(for: request)
        let task = session.downloadTask(with: sent)
        task.taskDescription = "\(request: request)"
        task.resume()
        return task
    }

    /// Starts an upload task of the file at `fileUrl` on the delegate session, as Y-Network
    /// does: its progress, response and completion go to the
    /// ``NetworkEngineConfiguration/sessionDelegate``. The task is resumed and returned.
    ///
    /// - Throws: `TransportError` ``GentleNetworking/TransportError/Code/invalidRequest`` for a
    ///   source that is not a `file:` URL; otherwise as ``submitBackgroundDownload(_:)``, then,
    ///   before any task is made, ``GentleNetworking/TransportError/Code/invalidRequest`` for a
    ///   source that is not a regular file (`/dev/zero`, a FIFO) and
    ///   ``GentleNetworking/TransportError/Code/other`` for one that cannot be opened (which the
    ///   session reported to the delegate before).
    @discardableResult
    open func submitBackgroundUpload(_ request: URLRequest, fileUrl: URL) throws -> Cancelable {
        guard let path = fileUrl.localFilePath else {
            throw TransportError.notAFileURL(fileUrl, role: "upload source", request: request.url)
        }
        // Only a regular file, as on every other upload path: `/dev/zero` or a FIFO was handed
        // to the session as it was (its size read as 0).
        let (session, sent) = try delegateSession(for: request) { try RegularFile.length(path, request: request.url) }
        let task = session.uploadTask(with: sent, fromFile: fileUrl)
        task.taskDescription = "\(request: request)"
        task.resume()
        return task
    }

    /// The delegate session, and `request` as it is sent
    /// (``GentleNetworking/RequestValidator/prepared(_:bodyLength:)``: checked, its method
    /// uppercased, a `Content-Length` that agrees with a body of `bodyLength()` bytes left out).
    /// `bodyLength` runs once the session is known to be there (``NetworkError/notConfigured``
    /// comes first).
    private func delegateSession(
        for request: URLRequest, bodyLength: () throws -> Int64? = { nil }
    ) throws -> (URLSession, URLRequest) {
        lock.lock()
        let session = configuredSession
        lock.unlock()
        guard let session else { throw NetworkError.notConfigured }
        // The session's own task: a request timeout corelibs would trap on (NaN, infinity) is
        // made usable first.
        return (session, try RequestValidator.prepared(Clamp.sessionSafeTimeout(request), bodyLength: try bodyLength()))
    }
}
