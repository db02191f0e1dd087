import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Downloads and uploads over the pinned connections, so that file transfers are pinned too.
extension PinningTransport: FileTransferTransport {
    /// Downloads over the pinned connections: streamed to the file on Linux (libcurl); on
    /// platforms whose pinned transport carries only `data(for:)`, through memory, with one
    /// progress report at the end.
    ///
    /// - Throws: What `data(for:)` throws, or the error writing `destination`.
    public func download(
        for request: URLRequest, to destination: URL, progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> HTTPURLResponse {
        try await download(for: request, to: destination, maxBytes: nil, progress: progress)
    }

    /// ``download(for:to:progress:)`` with a limit on the body's decoded size (`nil` for none):
    /// past `maxBytes`, ``TransportError/Code/responseTooLarge`` and no file at `destination`.
    /// The limit stops the transfer on either path (libcurl's, or `data(for:)`'s body limit).
    public func download(
        for request: URLRequest, to destination: URL, maxBytes: Int64?,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> HTTPURLResponse {
        try await send(request) { request in
            if let files = inner as? any FileTransferTransport {
                return try await files.download(for: request, to: destination, maxBytes: maxBytes, progress: progress)
            }
            return try await inner.downloadThroughMemory(
                for: request, to: destination, maxBytes: maxBytes, progress: progress)
        }
    }

    /// Uploads `file` over the pinned connections: streamed from the file on Linux (libcurl);
    /// elsewhere read into memory first.
    ///
    /// - Throws: What `data(for:)` throws, or the error reading `file`.
    public func upload(
        for request: URLRequest, fromFile file: URL, progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> (Data, HTTPURLResponse) {
        try await send(request) { request in
            if let files = inner as? any FileTransferTransport {
                return try await files.upload(for: request, fromFile: file, progress: progress)
            }
            return try await inner.uploadThroughMemory(for: request, fromFile: file, progress: progress)
        }
    }
}
