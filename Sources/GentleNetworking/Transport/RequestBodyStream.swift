import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How both transports send a request whose body is an `httpBodyStream`: read into memory
/// first, at most ``maxBytes``, then sent as `httpBody`.
///
/// Sent as a stream, the body could be sent only once: on a 307 or 308 redirect, which keeps the
/// method and the body, corelibs' URLSession re-sent the POST with an empty body, and libcurl
/// sent even the first request with an empty body; neither said a word. Read first, the body is
/// sent whole on every hop, on every transport. A body larger than ``maxBytes`` belongs in a
/// file: `CurlTransport.upload(for:fromFile:progress:)` reads it as it is sent.
public enum RequestBodyStream {
    /// The most bytes of a body stream a transport sends: 100 MiB.
    public static let maxBytes = 100 * 1024 * 1024

    /// `request` with its `httpBodyStream` read into `httpBody`; `request` itself when it has
    /// a `httpBody` (which `URLRequest` then sends) or no body at all.
    ///
    /// The stream is read on a thread of its own, since `InputStream` reads block.
    ///
    /// - Throws: ``TransportError`` with code ``TransportError/Code/invalidRequest`` when the
    ///   stream holds more than `limit` bytes or fails to read; nothing is sent then.
    static func reading(_ request: URLRequest, limit: Int = maxBytes) async throws -> URLRequest {
        guard request.httpBody == nil, let stream = request.httpBodyStream else { return request }
        let box = StreamBox(stream)
        let url = request.url
        // Resumed once: by the reader, or at once by a cancellation (a stream whose producer
        // stalls, such as a FIFO nobody writes to, would otherwise hold the caller for good).
        // A read blocked in the stream keeps its thread until the stream gives it bytes or an
        // end; the reader stops at its next chunk once cancelled.
        let waiting = Locked<CheckedContinuation<Result<Data, TransportError>, Never>?>(nil)
        let cancelled = Locked(false)
        let result: Result<Data, TransportError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let alreadyCancelled = cancelled.withLock { isCancelled -> Bool in
                    if !isCancelled { waiting.withLock { $0 = continuation } }
                    return isCancelled
                }
                if alreadyCancelled {
                    continuation.resume(returning: .failure(Self.cancelledError(url)))
                    return
                }
                ThreadName.start("gentle.body-stream") {
                    let result = readAll(box.stream, limit: limit, url: url, cancelled: { cancelled.current })
                    waiting.withLock { pending in
                        defer { pending = nil }
                        return pending
                    }?.resume(returning: result)
                }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
            waiting.withLock { pending in
                defer { pending = nil }
                return pending
            }?.resume(returning: .failure(Self.cancelledError(url)))
        }
        if cancelled.current { throw CancellationError() }
        var read = request
        read.httpBodyStream = nil
        read.httpBody = try result.get()
        return read
    }

    /// The placeholder a cancelled read ends with (the caller throws `CancellationError`).
    private static func cancelledError(_ url: URL?) -> TransportError {
        TransportError(.invalidRequest, url: url, message: "Reading the request's body stream was cancelled.")
    }

    /// Every byte of `stream`, at most `limit`.
    static func readAll(
        _ stream: InputStream, limit: Int, url: URL?, cancelled: () -> Bool = { false }
    ) -> Result<Data, TransportError> {
        stream.open()
        defer { stream.close() }
        var data = Data()
        let chunkSize = 64 * 1024
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        while true {
            if cancelled() { return .failure(cancelledError(url)) }
            let count = stream.read(&chunk, maxLength: chunkSize)
            if count == 0 { return .success(data) }
            guard count > 0 else {
                // `streamError` only when the stream says it failed: corelibs traps reading it on
                // a stream that was already read and closed (a request sent twice).
                let reason: String
                if stream.streamStatus == .error {
                    reason = stream.streamError.map { " (\($0.localizedDescription))" } ?? ""
                } else if stream.streamStatus == .closed {
                    reason = ": it was already read and closed (a body stream can be sent once)"
                } else {
                    reason = ""
                }
                return .failure(
                    TransportError(.invalidRequest, url: url, message: "The request's body stream failed\(reason)."))
            }
            // A subclass's `read` that claims more than it was given room for: its count cannot
            // be trusted (taken, it read past the buffer).
            guard count <= chunkSize else {
                return .failure(
                    TransportError(
                        .invalidRequest, url: url,
                        message: "The request's body stream reported \(count) bytes read into a buffer of \(chunkSize)."
                    ))
            }
            guard data.count <= limit - count else {
                return .failure(
                    TransportError(
                        .invalidRequest, url: url,
                        message:
                            "The request's body stream holds more than \(limit) bytes, the most a transport reads "
                            + "into memory; send a large body from a file (upload(for:fromFile:))."))
            }
            data.append(contentsOf: chunk[0..<count])
        }
    }

    /// An `InputStream` handed to the thread that reads it, and used by that thread alone.
    private struct StreamBox: @unchecked Sendable {
        let stream: InputStream
        init(_ stream: InputStream) { self.stream = stream }
    }
}
