import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A transport that can move request and response bodies to and from files with constant
/// memory, reporting progress: ``CurlTransport`` on Linux.
///
/// Decorators such as ``RetryTransport`` do not conform: they only see `data(for:)`.
public protocol FileTransferTransport: HTTPTransportProtocol {
    /// Downloads the response body of `request` into `destination` (replaced if present), and
    /// returns the final response; a failed transfer leaves no partial file there. A
    /// `destination` that is not a file URL is ``TransportError/Code/invalidRequest``, and
    /// nothing is sent. A file that cannot be created, written or moved into place is a
    /// `CocoaError` naming `destination` (`.fileWriteOutOfSpace` for a full disk), as a
    /// download through memory reports it.
    func download(
        for request: URLRequest, to destination: URL, progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> HTTPURLResponse

    /// ``download(for:to:progress:)`` with a limit on the body's decoded size, `nil` for none
    /// (a download to a file has none by default): past `maxBytes` the transfer stops with
    /// ``TransportError/Code/responseTooLarge`` and no file is left at `destination`.
    ///
    /// A conformer that does not implement it gets a default that checks the file's size once
    /// the transfer is over (so the disk holds the whole body meanwhile); ``CurlTransport`` and
    /// ``PinningTransport`` stop the transfer at the limit.
    func download(
        for request: URLRequest, to destination: URL, maxBytes: Int64?,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> HTTPURLResponse

    /// Sends the contents of `file` as the body of `request`, reading it as the upload proceeds,
    /// and returns the response body and response. A `file` that is not a file URL is
    /// ``TransportError/Code/invalidRequest``, and nothing is sent or read.
    func upload(
        for request: URLRequest, fromFile file: URL, progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> (Data, HTTPURLResponse)
}

extension FileTransferTransport {
    /// The default of ``download(for:to:maxBytes:progress:)`` for a conformer that cannot stop
    /// its transfer at a limit: the body is downloaded beside `destination` and checked there;
    /// only a body within `maxBytes` replaces what is at `destination` (see
    /// ``TransportError/downloadWithinLimit(to:maxBytes:request:download:)``).
    public func download(
        for request: URLRequest, to destination: URL, maxBytes: Int64?,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> HTTPURLResponse {
        try await TransportError.downloadWithinLimit(to: destination, maxBytes: maxBytes, request: request.url) {
            try await download(for: request, to: $0, progress: progress)
        }
    }
}

extension TransportError {
    /// A download that cannot stop at `maxBytes` (`nil`: no limit), made by `download` to a
    /// temporary file beside `destination` (same directory, same file system), then checked:
    /// within the limit it replaces `destination` in one rename; past it, it is removed and
    /// ``Code/responseTooLarge`` thrown, and `destination` is as it was (it used to be replaced
    /// first and removed after, losing the caller's file). What the checking defaults of
    /// ``FileTransferTransport`` and Y-Network's engines share. Without a limit, `download`
    /// writes `destination` itself.
    ///
    /// - Throws: `destination`'s errors (``downloadDestinationPath(_:request:)``) before
    ///   anything is sent; `download`'s; a `CocoaError` naming `destination` when the rename fails.
    package static func downloadWithinLimit<Response>(
        to destination: URL, maxBytes: Int64?, request: URL?, download: (URL) async throws -> Response
    ) async throws -> Response {
        guard let maxBytes else { return try await download(destination) }
        let path = try downloadDestinationPath(destination, request: request)
        let staging = AtomicFile.temporaryPath(for: path)
        defer { unlink(staging) }  // gone already once renamed
        let response = try await download(URL(fileURLWithPath: staging))
        var info = stat()
        // A conformer that wrote nothing has nothing to check or put in place.
        guard lstat(staging, &info) == 0 else { return response }
        guard Int64(info.st_size) <= max(0, maxBytes) else {
            throw TransportError(
                .responseTooLarge, url: request,
                message: "The downloaded body is larger than the limit of \(max(0, maxBytes)) bytes.")
        }
        do {
            try AtomicFile.move(staging, replacing: path)
        } catch {
            throw error.cocoaError(target: path)
        }
        return response
    }
}

extension DefaultTransport {
    /// The platform's default file-transfer transport: the shared ``CurlTransport`` on Linux,
    /// `nil` where there is none (Apple platforms use a background `URLSession` for this).
    public static func makeFileTransfer() -> (any FileTransferTransport)? {
        #if canImport(CCurl)
            return CurlTransport.shared
        #else
            return nil
        #endif
    }
}

extension HTTPTransportProtocol {
    /// A download through `data(for:)`: the body is held in memory, then written to
    /// `destination` atomically, readable by its owner only (as ``CurlTransport`` writes a
    /// download), with one progress report at the end. For transports that cannot stream to a
    /// file but must not be bypassed (pinning, retries). A failed write is a `CocoaError` naming
    /// `destination`.
    ///
    /// `maxBytes`, when given, lowers the in-memory limit in force for this body (never raises
    /// it: the whole body, of any status, is held in memory here).
    package func downloadThroughMemory(
        for request: URLRequest, to destination: URL, maxBytes: Int64? = nil,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> HTTPURLResponse {
        let destinationPath = try TransportError.downloadDestinationPath(destination, request: request.url)
        let data: Data
        let response: HTTPURLResponse
        if let maxBytes {
            (data, response) = try await ResponseLimits.withBodyLimitCap(maxBytes) { try await self.data(for: request) }
        } else {
            (data, response) = try await self.data(for: request)
        }
        try AtomicFile.writeDownload(data, to: destinationPath)
        let size = Int64(data.count)
        progress?(
            TransferProgress(bytesReceived: size, expectedBytesToReceive: size, bytesSent: 0, expectedBytesToSend: 0))
        return response
    }

    /// An upload through `data(for:)`: `file` is read into the body, with one progress report
    /// at the end.
    package func uploadThroughMemory(
        for request: URLRequest, fromFile file: URL, progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> (Data, HTTPURLResponse) {
        // `Data(contentsOf:)` would fetch an `http(s)` URL itself, past this transport.
        guard let filePath = file.localFilePath else {
            throw TransportError.notAFileURL(file, role: "upload source", request: request.url)
        }
        // Only a regular file, at most what an in-memory body holds: `Data(contentsOf:)` read
        // `/dev/zero` until the process was killed, and waited in `open` for a FIFO's writer.
        let body = try RegularFile.contents(filePath, limit: RequestBodyStream.maxBytes, request: request.url)
        // As `CurlTransport.upload` does: a GET or HEAD carries no body, so it is sent as POST.
        let (data, response) = try await self.data(for: RequestValidator.upload(request, body: body))
        let sent = Int64(body.count)
        progress?(
            TransferProgress(
                bytesReceived: Int64(data.count), expectedBytesToReceive: Int64(data.count), bytesSent: sent,
                expectedBytesToSend: sent))
        return (data, response)
    }
}
