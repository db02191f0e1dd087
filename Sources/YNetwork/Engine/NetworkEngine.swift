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

    /// ``download(_:to:progress:)`` with a limit on the 2xx body's size (`nil` for none, as a
    /// download to a file has by default): past `maxBytes`, `TransportError(.responseTooLarge)`
    /// and no file at `destination`. ``NetworkManager`` passes
    /// ``NetworkManagerConfiguration/maxDownloadBytes``.
    ///
    /// By default the file is checked once the download is over (so the disk holds the whole
    /// body meanwhile); ``URLNetworkEngine`` stops the transfer at the limit.
    func download(
        _ request: URLRequest, to destination: URL, maxBytes: Int64?,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> URLResponse

    /// Sends the file at `file` as the body of `request`, reporting progress; returns the
    /// response body and response.
    func upload(
        _ request: URLRequest, fromFile file: URL, progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> (Data, URLResponse)

    /// Starts a download task whose progress, file and completion go to the configured
    /// ``NetworkEngineConfiguration/sessionDelegate``, as in Y-Network, and returns it.
    ///
    /// ``NetworkManager`` does not call this (its transfers report through their handlers);
    /// it is for code that drives the session delegate itself.
    ///
    /// - Throws: ``NetworkError/notConfigured`` when the engine has no delegate session; by
    ///   default, always.
    @discardableResult
    func submitBackgroundDownload(_ request: URLRequest) throws -> Cancelable

    /// Starts an upload task of the file at `fileUrl` whose progress, response and completion go
    /// to the configured ``NetworkEngineConfiguration/sessionDelegate``, as in Y-Network, and
    /// returns it.
    ///
    /// - Throws: ``NetworkError/notConfigured`` when the engine has no delegate session; by
    ///   default, always.
    @discardableResult
    func submitBackgroundUpload(_ request: URLRequest, fileUrl: URL) throws -> Cancelable
}

/// Defaults that let an engine written to Y-Network's protocol (`configure`, `submit` and the
/// two delegate-driven transfers) work with ``NetworkManager`` unchanged.
extension NetworkEngine {
    /// Downloads through ``submit(_:)``: the whole body in memory, written to `destination`
    /// (readable by this user only), with one progress report at the end. Engines that can
    /// stream implement it.
    public func download(
        _ request: URLRequest, to destination: URL, progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> URLResponse {
        let destinationPath = try TransportError.downloadDestinationPath(destination, request: request.url)
        let (data, response) = try await submit(request)
        // Replaced by a rename once written: a failed write leaves the old file as it was.
        try AtomicFile.writeDownload(data, to: destinationPath)
        let size = Int64(data.count)
        progress?(
            TransferProgress(bytesReceived: size, expectedBytesToReceive: size, bytesSent: 0, expectedBytesToSend: 0))
        return response
    }

    /// ``download(_:to:progress:)`` to a file beside `destination`, checked against `maxBytes`
    /// there: only a body within it replaces `destination`; past it, `responseTooLarge` and
    /// `destination` as it was. Engines that can stop a transfer at the limit implement it.
    public func download(
        _ request: URLRequest, to destination: URL, maxBytes: Int64?,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> URLResponse {
        try await TransportError.downloadWithinLimit(to: destination, maxBytes: maxBytes, request: request.url) {
            try await download(request, to: $0, progress: progress)
        }
    }

    /// Uploads through ``submit(_:)``: `file` is read into the request body, with one progress
    /// report at the end. Engines that can stream implement it.
    public func upload(
        _ request: URLRequest, fromFile file: URL, progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> (Data, URLResponse) {
        // `Data(contentsOf:)` would fetch an `http(s)` URL itself, past the engine.
        guard file.isFileURL else {
            throw TransportError.notAFileURL(file, role: "upload source", request: request.url)
        }
        // Only a regular file, at most RequestBodyStream.maxBytes: /dev/zero or a FIFO would
        // be read until memory ran out, or hold the thread in open(2).
        let body = try RegularFile.contents(
            file.localFilePath ?? file.path, limit: RequestBodyStream.maxBytes, request: request.url)
        // A GET (a `NetworkRequest`'s default method) goes as POST, as through URLNetworkEngine.
        let (data, response) = try await submit(RequestValidator.upload(request, body: body))
        let sent = Int64(body.count)
        progress?(
            TransferProgress(
                bytesReceived: Int64(data.count), expectedBytesToReceive: Int64(data.count), bytesSent: sent,
                expectedBytesToSend: sent))
        return (data, response)
    }

    /// An engine without a delegate session cannot start one: ``NetworkError/notConfigured``.
    @discardableResult
    public func submitBackgroundDownload(_ request: URLRequest) throws -> Cancelable {
        throw NetworkError.notConfigured
    }

    /// An engine without a delegate session cannot start one: ``NetworkError/notConfigured``.
    @discardableResult
    public func submitBackgroundUpload(_ request: URLRequest, fileUrl: URL) throws -> Cancelable {
        throw NetworkError.notConfigured
    }
}
