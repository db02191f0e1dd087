import Foundation
import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Downloads to a file and uploads from a file, with progress.
///
/// On Linux these go through libcurl (``URLNetworkEngine``'s file-transfer transport): the body
/// moves between the socket and the file with constant memory. Progress handlers run on the
/// main queue with the fraction done; the last call is `1.0` when the transfer succeeds.
extension NetworkManager {
    /// Runs ``submitBackgroundDownload(_:progress:completionHandler:)``.
    func download(
        _ request: NetworkRequest, progress: ProgressHandler?, completionHandler: @escaping FileDownloadHandler
    ) -> TransferHandle {
        let configuration = currentConfiguration
        let reporter = ProgressReporter(progress)
        let completionHandler = Handoff(completionHandler)
        return TransferHandle(
            Task {
                var made: URL?
                defer { made.map(PrivateTemporaryFile.remove) }
                do {
                    let file = try PrivateTemporaryFile.url(named: "ynetwork-download-\(UUID().uuidString)")
                    made = file
                    let built = try RequestAssembler(configuration: configuration).build(request)
                    defer { built.removeTemporaryFile() }
                    let ((), response) = try await self.withSession(
                        request, built.request, configuration: configuration
                    ) { urlRequest, engine in
                        reporter.restart()
                        // A multipart body above the streaming threshold was written to a file
                        // (`httpBody` stays empty): sent from it, a new stream per attempt (a
                        // refreshed retry reads it again). It went out with no body at all.
                        var sent = urlRequest
                        if let bodyFile = built.bodyFile, let path = bodyFile.localFilePath {
                            let length = try RegularFile.length(path, request: urlRequest.url)
                            sent.httpBodyStream = InputStream(url: bodyFile)
                            sent.setValue(String(length), forHTTPHeaderField: "Content-Length")
                        }
                        let report: @Sendable (TransferProgress) -> Void = { reporter.report($0.fractionReceived) }
                        // Without a limit, the method engines have always had: an engine's (or
                        // a `URLNetworkEngine` subclass's) own override of it is what runs.
                        let response =
                            if let limit = configuration.maxDownloadBytes {
                                try await engine.download(sent, to: file, maxBytes: limit, progress: report)
                            } else {
                                try await engine.download(sent, to: file, progress: report)
                            }
                        return ((), response)
                    }
                    try Task.checkCancellation()
                    try Self.check(response, bodyFile: file)
                    await reporter.finish()
                    completionHandler.value(.success(file))
                } catch {
                    completionHandler.value(.failure(NetworkError.mapping(error)))
                }
            })
    }

    /// Runs an upload of `file`, or of the request's body written to a temporary file.
    func transfer(
        _ request: NetworkRequest, file: URL?, progress: ProgressHandler?,
        resultHandler: @escaping (Result<Data, any Error>) -> Void
    ) -> TransferHandle {
        let configuration = currentConfiguration
        let reporter = ProgressReporter(progress)
        let resultHandler = Handoff(resultHandler)
        return TransferHandle(
            Task {
                let result: Result<Data, any Error>
                var temporary: URL?
                do {
                    let built = try RequestAssembler(configuration: configuration).build(request)
                    var urlRequest = built.request
                    urlRequest.httpBody = nil
                    let source: URL
                    if let file {
                        source = file
                        built.removeTemporaryFile()
                    } else if let bodyFile = built.bodyFile {
                        source = bodyFile
                        temporary = bodyFile
                    } else {
                        let bodyFile = try PrivateTemporaryFile.url(named: "ynetwork-upload-\(UUID().uuidString)")
                        temporary = bodyFile
                        try writePrivateFile(built.request.httpBody ?? Data(), to: bodyFile)
                        source = bodyFile
                    }
                    let (data, response) = try await self.withSession(request, urlRequest, configuration: configuration)
                    { urlRequest, engine in
                        reporter.restart()
                        return try await engine.upload(
                            urlRequest, fromFile: source, progress: { reporter.report($0.fractionSent) })
                    }
                    try Task.checkCancellation()
                    try Self.check(response, body: data)
                    await reporter.finish()
                    result = .success(data)
                } catch {
                    result = .failure(NetworkError.mapping(error))
                }
                if let temporary { PrivateTemporaryFile.remove(temporary) }
                await onMain { resultHandler.value(result) }
            })
    }

    /// Throws for anything but a 2xx: 401 is ``NetworkError/unauthenticated``, others ``HttpError``.
    static func check(_ response: URLResponse, body: Data) throws {
        guard let http = response as? HTTPURLResponse else { throw NetworkError.invalidResponse }
        switch http.statusCode {
        case 200..<300: return
        case 401: throw NetworkError.unauthenticated
        default: throw HttpError(response: http, data: body)
        }
    }

    /// ``check(_:body:)`` for a download, whose error body (up to 1 MiB) is read from the file.
    static func check(_ response: URLResponse, bodyFile: URL) throws {
        guard let http = response as? HTTPURLResponse, !(200..<300).contains(http.statusCode) else {
            try check(response, body: Data())
            return
        }
        let handle = try? FileHandle(forReadingFrom: bodyFile)
        let body = (try? handle?.read(upToCount: 1 << 20)) ?? nil
        try? handle?.close()
        try check(response, body: body ?? Data())
    }
}

/// Writes `data` to a new file that only this user can read (temporary bodies may hold
/// credentials or personal data, and the temporary directory is shared): created `0600` before
/// its first byte, then renamed into place, so no other user can open it at any moment.
func writePrivateFile(_ data: Data, to url: URL) throws {
    do {
        try AtomicFile.write(data, to: url.path, mode: 0o600)
    } catch {
        throw MultipartError.cannotWrite(url)
    }
}

/// Runs `work` on the main queue and waits for it.
func onMain(_ work: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        DispatchQueue.main.async {
            work()
            done.resume()
        }
    }
}

/// Sends progress fractions to a handler on the main queue: only when the value grows, and a
/// final `1.0` on success.
final class ProgressReporter: Sendable {
    private let handler: Handoff<ProgressHandler>?
    private let last = Locked<Double>(-1)
    /// Where the handler runs: the main queue (another one in tests).
    private let queue: DispatchQueue
    /// The longest ``finish()`` waits for ``queue``.
    private let wait: TimeInterval

    init(_ handler: ProgressHandler?, queue: DispatchQueue = .main, wait: TimeInterval = mainQueueWait) {
        self.handler = handler.map(Handoff.init)
        self.queue = queue
        self.wait = wait
    }

    /// Starts over, for a transfer sent again after a credential refresh.
    func restart() {
        last.withLock { $0 = -1 }
    }

    func report(_ fraction: Double?) {
        guard let handler, let fraction else { return }
        let advanced = last.withLock { last -> Bool in
            guard fraction > last else { return false }
            last = fraction
            return true
        }
        if advanced { queue.async { handler.value(fraction) } }
    }

    /// Reports `1.0` unless it was the last value, and waits until the main queue has run every
    /// report sent so far, for at most ``mainQueueWait``: a caller that blocks the main thread
    /// until the transfer's completion (a semaphore in a synchronous test, a command-line tool)
    /// deadlocked on an unbounded wait, where Y-Network's completion never waited for the main
    /// queue. Past the wait the completion goes on, and the reports run when the main queue does.
    func finish() async {
        guard let handler else { return }
        let needed = last.withLock { last -> Bool in
            defer { last = 1 }
            return last < 1
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let resumed = Locked(false)
            let resume: @Sendable () -> Void = {
                if resumed.withLock({ was in
                    defer { was = true }; return !was
                }) {
                    done.resume()
                }
            }
            queue.async {
                if needed { handler.value(1) }
                resume()
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + wait, execute: resume)
        }
    }

    /// The longest ``finish()`` waits for the main queue by default: 5 s (a loaded main queue
    /// still delivers the final `1.0` before the completion; a blocked one costs 5 s, not a hang).
    static let mainQueueWait: TimeInterval = 5
}
