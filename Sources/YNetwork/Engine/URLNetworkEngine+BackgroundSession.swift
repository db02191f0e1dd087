// Apple platforms only: downloads and uploads through a background URLSession, which keeps
// going while the app is suspended. (Linux has no background sessions; there the engine uses
// libcurl through FileTransferTransport.) Not compiled on Linux, except by the Apple type-check
// (AppleCheck/, which defines GENTLE_APPLE_TYPECHECK).
#if canImport(Darwin) || GENTLE_APPLE_TYPECHECK
    import Foundation
    import GentleNetworking

    #if canImport(FoundationNetworking)
        import FoundationNetworking  // the Apple type-check only
    #endif

    /// A background `URLSession` and the delegate that turns its callbacks into async results.
    ///
    /// Exactly one per identifier per process (``session(identifier:)``): the system allows one
    /// session per background identifier, and a second one with the same identifier misses the
    /// first one's events.
    final class BackgroundTransferSession: NSObject, URLSessionDownloadDelegate, URLSessionDataDelegate,
        @unchecked Sendable
    {
        // @unchecked: `transfers` is behind `lock`; URLSession calls the delegate on its own queue.
        private struct Transfer {
            var destination: URL?
            var body = Data()
            var progress: (@Sendable (TransferProgress) -> Void)?
            var continuation: CheckedContinuation<(Data, URLResponse), any Error>
            var movedFileError: (any Error)?
            /// The response body passed the in-memory limit: the task was cancelled for it.
            var tooLarge: TransportError?
            /// The most bytes of a 2xx body a download writes; `nil` for no limit.
            var maxBytes: Int64?
        }

        private let lock = NSLock()
        private var transfers: [Int: Transfer] = [:]

        /// The sessions by identifier, each made the first time it is asked for (never released:
        /// a background session lives as long as the process).
        private static let sessions = OncePerKey<(URLSession, BackgroundTransferSession)>()

        private override init() {}

        /// The one session for `identifier` in this process (made on first use, however many
        /// callers ask at once), and the delegate that owns its transfers.
        static func session(identifier: String) -> (URLSession, BackgroundTransferSession) {
            sessions.value(for: identifier) { identifier in
                let delegate = BackgroundTransferSession()
                let session = URLSession(
                    configuration: .background(withIdentifier: identifier), delegate: delegate, delegateQueue: nil)
                return (session, delegate)
            }
        }

        /// Downloads `request` to `destination` on the background session `identifier`.
        static func download(
            _ request: URLRequest, to destination: URL, maxBytes: Int64?, identifier: String,
            progress: (@Sendable (TransferProgress) -> Void)?
        ) async throws -> URLResponse {
            let (session, delegate) = session(identifier: identifier)
            return try await delegate.run(
                session.downloadTask(with: request), destination: destination, maxBytes: maxBytes, progress: progress
            ).1
        }

        /// Uploads `file` with `request` on the background session `identifier`.
        static func upload(
            _ request: URLRequest, fromFile file: URL, identifier: String,
            progress: (@Sendable (TransferProgress) -> Void)?
        ) async throws -> (Data, URLResponse) {
            // Only a regular file, as on every other upload path (the caller checked the URL).
            if let path = file.localFilePath { _ = try RegularFile.length(path, request: request.url) }
            let (session, delegate) = session(identifier: identifier)
            return try await delegate.run(
                session.uploadTask(with: request, fromFile: file), destination: nil, progress: progress)
        }

        private func run(
            _ task: URLSessionTask, destination: URL?, maxBytes: Int64? = nil,
            progress: (@Sendable (TransferProgress) -> Void)?
        ) async throws -> (Data, URLResponse) {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    lock.withLock {
                        transfers[task.taskIdentifier] = Transfer(
                            destination: destination, progress: progress, continuation: continuation,
                            maxBytes: maxBytes.map { max(0, $0) })
                    }
                    task.resume()
                }
            } onCancel: {
                task.cancel()
            }
        }

        private func update(_ task: URLSessionTask, _ change: (inout Transfer) -> Void) {
            lock.withLock {
                if var transfer = transfers[task.taskIdentifier] {
                    change(&transfer)
                    transfers[task.taskIdentifier] = transfer
                }
            }
        }

        private func progressHandler(_ task: URLSessionTask) -> (@Sendable (TransferProgress) -> Void)? {
            lock.withLock { transfers[task.taskIdentifier]?.progress }
        }

        /// A download's 2xx body is the download, limited only by the caller's `maxBytes`; the
        /// body of any other status (an error page, a redirect not followed) is held to
        /// ``ResponseLimits/defaultMaxBodyBytes`` (100 MiB), as on every other download path.
        /// Past its limit, or declared past it, the task is cancelled, the download fails with
        /// ``TransportError/Code/responseTooLarge`` and nothing is moved into place (an endless
        /// 500 was written to disk until the resource timeout, 7 days by default).
        func urlSession(
            _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
            totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
        ) {
            let status = (downloadTask.response as? HTTPURLResponse)?.statusCode ?? 200
            let size = max(totalBytesWritten, totalBytesExpectedToWrite)
            var exceeded = false
            update(downloadTask) { transfer in
                let limit = (200..<300).contains(status) ? transfer.maxBytes : ResponseLimits.defaultMaxBodyBytes
                guard transfer.tooLarge == nil, let limit, size > limit else { return }
                transfer.tooLarge = TransportError(
                    .responseTooLarge, url: downloadTask.originalRequest?.url,
                    message: "The body of the \(status) response passed the limit of \(limit) bytes.")
                exceeded = true
            }
            if exceeded {
                downloadTask.cancel()
                return
            }
            let expected = totalBytesExpectedToWrite > 0 ? totalBytesExpectedToWrite : nil
            progressHandler(downloadTask)?(
                TransferProgress(
                    bytesReceived: totalBytesWritten, expectedBytesToReceive: expected, bytesSent: 0,
                    expectedBytesToSend: 0))
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
            totalBytesExpectedToSend: Int64
        ) {
            let expected = totalBytesExpectedToSend > 0 ? totalBytesExpectedToSend : nil
            progressHandler(task)?(
                TransferProgress(
                    bytesReceived: 0, expectedBytesToReceive: nil, bytesSent: totalBytesSent,
                    expectedBytesToSend: expected))
        }

        func urlSession(
            _ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL
        ) {
            // The file at `location` is removed when this returns: move it now (not a body past
            // its limit, whose task was cancelled). The limit is checked here too: a suspended
            // app gets no progress calls, only this one and the completion.
            let status = (downloadTask.response as? HTTPURLResponse)?.statusCode ?? 200
            let size = (try? FileManager.default.attributesOfItem(atPath: location.path)[.size] as? NSNumber)?
                .int64Value
            update(downloadTask) { transfer in
                guard let destination = transfer.destination, transfer.tooLarge == nil else { return }
                let limit = (200..<300).contains(status) ? transfer.maxBytes : ResponseLimits.defaultMaxBodyBytes
                if let limit, let size, size > limit {
                    transfer.tooLarge = TransportError(
                        .responseTooLarge, url: downloadTask.originalRequest?.url,
                        message: "The body of the \(status) response passed the limit of \(limit) bytes.")
                    return
                }
                do throws(AtomicFile.Failure) {
                    // Replaced in one step, as on every other download path: a file or a
                    // symbolic link is replaced (a link itself, not its target), a directory
                    // never (refused before the task started; one made since stays), and
                    // nothing is removed first (`moveItem`, which does not replace, needed it).
                    try AtomicFile.move(location.path, replacing: destination.path)
                } catch {
                    transfer.movedFileError = error.cocoaError(target: destination.path)
                }
            }
        }

        /// An upload's response body is kept in memory: at most ``ResponseLimits/defaultMaxBodyBytes``
        /// (100 MiB), as for every in-memory body; past it the task is cancelled and the upload
        /// fails with ``TransportError/Code/responseTooLarge`` (an endless answer would otherwise
        /// grow the process until it is killed).
        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            let limit = ResponseLimits.defaultMaxBodyBytes
            var exceeded = false
            update(dataTask) { transfer in
                guard transfer.tooLarge == nil else { return }
                if Int64(transfer.body.count) + Int64(data.count) > limit {
                    transfer.body = Data()
                    transfer.tooLarge = TransportError(
                        .responseTooLarge, url: dataTask.originalRequest?.url,
                        message: "The response to the upload passed the limit of \(limit) bytes.")
                    exceeded = true
                } else {
                    transfer.body.append(data)
                }
            }
            if exceeded { dataTask.cancel() }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            guard let transfer = lock.withLock({ transfers.removeValue(forKey: task.taskIdentifier) }) else { return }
            if let tooLarge = transfer.tooLarge {
                transfer.continuation.resume(throwing: tooLarge)
            } else if let error = error ?? transfer.movedFileError {
                // Typed as every transport types it (`.timedOut`, `.notConnectedToInternet`...);
                // the URLError (its resume data, its failing URL) is the underlying error.
                let mapped: any Error =
                    (error as? URLError).map { TransportError.map($0, url: task.originalRequest?.url) } ?? error
                transfer.continuation.resume(throwing: mapped)
            } else if let response = task.response {
                transfer.continuation.resume(returning: (transfer.body, response))
            } else {
                transfer.continuation.resume(
                    throwing: TransportError(.badResponse, url: task.originalRequest?.url, message: "No response."))
            }
        }
    }
#endif
