import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

@testable import YNetwork

private struct FileRequest: NetworkRequest {
    var path: PathRepresentable
    var method: HttpMethod = .GET
    var body: BodyBuilder? = nil
    var requestType: RequestContentType = .binary
}

private struct Upload: MultipartRequest {
    var path: PathRepresentable { "upload" }
    let multipart: MultipartBuilder
}

private struct PutUpload: MultipartRequest {
    var path: PathRepresentable { "upload" }
    var method: HttpMethod { .PUT }
    let multipart: MultipartBuilder
}

@Suite("Transfers: download to a file and upload from one, with progress and cancellation")
struct TransferTests {
    @Test("A 3 MiB download lands in a file, byte for byte; progress rises on the main queue to 1.0")
    func download() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let payload = patternData(3 << 20, multiplier: 7)
        server.route("GET", "/file") { _ in
            LoopbackResponse(status: 200, body: payload).with { $0.chunkSize = 64 * 1024 }
        }
        let manager = makeManager(server: server)
        let progress = Recorder<Double>()
        let onMain = Recorder<Bool>()
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("ynetwork-copy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: copy) }

        let result: Result<URL, any Error> = await waitFor { done in
            manager.submitBackgroundDownload(
                FileRequest(path: "file"),
                progress: { fraction in
                    progress.append(fraction)
                    onMain.append(isOnMainQueue())
                },
                completionHandler: { result in
                    if case .success(let url) = result { try? FileManager.default.copyItem(at: url, to: copy) }
                    done(result)
                })
        }

        let temporary = try result.get()
        #expect(try Data(contentsOf: copy) == payload)
        // The file is removed once the handler has returned, which may be just after `done` resumed us.
        #expect(await eventually { !FileManager.default.fileExists(atPath: temporary.path) })
        #expect(progress.values.last == 1.0)
        #expect(progress.values == progress.values.sorted())
        #expect(onMain.values.allSatisfy { $0 } && !onMain.values.isEmpty)
    }

    @Test("A download whose multipart body is above the 10 MiB streaming threshold sends that body, whole")
    func downloadWithLargeMultipartBody() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("POST", "/export") { _ in .text("exported") }
        let payload = patternData(11 << 20, multiplier: 13)
        let form = MultipartForm(
            parts: [
                "data": .file(
                    info: MultipartFileInfo(fileName: "d.bin", data: payload, mimeType: "application/octet-stream"))
            ],
            boundary: "dl-b")
        let request = FileRequest(path: "export", method: .POST, body: form, requestType: .multipart(boundary: "dl-b"))
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("ynetwork-copy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: copy) }
        let result: Result<URL, any Error> = await waitFor { done in
            makeManager(server: server).submitBackgroundDownload(request) { result in
                // The file is removed once the handler has returned.
                if case .success(let url) = result { try? FileManager.default.copyItem(at: url, to: copy) }
                done(result)
            }
        }
        _ = try result.get()
        #expect(try Data(contentsOf: copy) == Data("exported".utf8))
        let received = try #require(server.requests(path: "/export").first)
        #expect(received.body.count == Int(try form.contentLength()), "the server got \(received.body.count) bytes")
        #expect(parseMultipart(received.body, boundary: "dl-b")?.first?.body == payload)
    }

    @Test("A download that gets 404 fails with HttpError carrying the body; 401 is unauthenticated")
    func downloadStatuses() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/missing") { _ in .json(#"{"error":"gone"}"#, status: 404) }
        server.route("GET", "/private") { _ in .status(401) }
        let manager = makeManager(server: server)
        let missing: Result<URL, any Error> = await waitFor { done in
            manager.submitBackgroundDownload(FileRequest(path: "missing"), completionHandler: done)
        }
        let error = try #require(missing.failure as? HttpError)
        #expect(error.statusCode == 404)
        #expect(error.data == Data(#"{"error":"gone"}"#.utf8))
        let denied: Result<URL, any Error> = await waitFor { done in
            manager.submitBackgroundDownload(FileRequest(path: "private"), completionHandler: done)
        }
        #expect(denied.failure as? YNetwork.NetworkError == .unauthenticated)
    }

    @Test("Uploading a 4 MiB file: the server gets every byte, the handler gets the response body, progress hits 1.0")
    func uploadFromFile() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("PUT", "/blob") { request in .json(#"{"received":\#(request.body.count)}"#) }
        let source = try makePatternFile(size: 4 << 20)
        defer { try? FileManager.default.removeItem(at: source) }
        let progress = Recorder<Double>()
        let result: Result<Data, any Error> = await waitFor { done in
            makeManager(server: server).submitBackgroundUpload(
                FileRequest(path: "blob", method: .PUT), fromFile: source, progress: { progress.append($0) },
                resultHandler: { result in
                    #expect(isOnMainQueue())
                    done(result)
                })
        }
        #expect(try result.get() == Data(#"{"received":4194304}"#.utf8))
        let received = try #require(server.requests(path: "/blob").first)
        #expect(received.body == (try Data(contentsOf: source)))
        #expect(progress.values.last == 1.0)
    }

    @Test("The README-style upload: the request's multipart body is sent from a file; completion gets the body")
    func uploadRequestBody() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("POST", "/upload") { _ in .json(#"{"ok":true}"#) }
        let form = MultipartForm(parts: ["name": .formField(value: "Ada")], boundary: "b-1")
        let body: Data = await waitFor { done in
            makeManager(server: server).submitBackgroundUpload(Upload(multipart: form), completionHandler: done)
        }
        #expect(body == Data(#"{"ok":true}"#.utf8))
        let received = try #require(server.requests(path: "/upload").first)
        #expect(received.header("Content-Type") == "multipart/form-data; boundary=b-1")
        #expect(parseMultipart(received.body, boundary: "b-1")?.first?.body == Data("Ada".utf8))
    }

    @Test(
        "The last progress report waits for a blocked handler queue a bounded time, then the transfer completes (the main thread blocked on a completion deadlocked)"
    )
    func progressWaitIsBounded() async throws {
        // A queue of its own stands in for a main thread blocked until the completion comes
        // (blocking the real one would stall every other test that reports on it).
        let queue = DispatchQueue(label: "blocked-handler-queue")
        let release = DispatchSemaphore(value: 0)
        queue.async { _ = release.wait(timeout: .now() + 300) }
        defer { release.signal() }
        let seen = Recorder<Double>()
        let reporter = ProgressReporter({ seen.append($0) }, queue: queue, wait: 0.5)
        reporter.report(0.5)
        let started = Date()
        // Before: an unbounded wait, held until the queue ran (here: 300 s). Loose bounds for a
        // starved ThreadSanitizer run.
        await reporter.finish()
        let waited = Date().timeIntervalSince(started)
        #expect(waited >= 0.4 && waited < 200, "\(waited) s")
        release.signal()
        for _ in 0..<6000 where seen.values.count < 2 { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(seen.values == [0.5, 1.0], "the reports still run, in order, once the queue does")
    }

    @Test(
        "An upload answered 422: completionHandler gets the error body, as in Y-Network; resultHandler gets the HttpError"
    )
    func uploadErrorBody() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("POST", "/upload") { _ in LoopbackResponse(status: 422, body: Data(#"{"error":"too big"}"#.utf8)) }
        let form = MultipartForm(parts: ["name": .formField(value: "Ada")], boundary: "b-2")
        let body: Data = await waitFor { done in
            makeManager(server: server).submitBackgroundUpload(Upload(multipart: form), completionHandler: done)
        }
        #expect(body == Data(#"{"error":"too big"}"#.utf8))
        // A bare trailing closure that does not name its type is the progress handler, as with
        // Y-Network's own signature (the `resultHandler` overload took it, with a `Result`).
        let seen = Recorder<String>()
        let handle = makeManager(server: server).submitBackgroundUpload(Upload(multipart: form)) { value in
            seen.append("\(type(of: value))")
        }
        try await Task.sleep(nanoseconds: 500_000_000)
        handle?.cancel()
        #expect(seen.values.allSatisfy { $0 == "Double" }, "\(seen.values)")
        let result: Result<Data, any Error> = await waitFor { done in
            makeManager(server: server).submitBackgroundUpload(Upload(multipart: form), resultHandler: done)
        }
        #expect((result.failureValue as? HttpError)?.statusCode == 422, "\(result)")
    }

    @Test("With a decorator stack as the transport, transfers and large multipart bodies go through it")
    func transfersUseTheGivenStack() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/file", handler: LoopbackServer.sequence([.status(503), .text("payload")]))
        // PUT: RetryTransport retries idempotent methods only.
        server.route(
            "PUT", "/upload", handler: LoopbackServer.sequence([.status(503), .json(#"{"id":1,"name":"big"}"#)]))
        let retrying = RetryTransport(policy: RetryPolicy(maxRetries: 2, baseDelay: 0, maxDelay: 0))
        let manager = makeManager(server: server, transport: retrying)

        let downloaded: Result<Data, any Error> = await waitFor { done in
            manager.submitBackgroundDownload(FileRequest(path: "file")) { result in
                done(result.flatMap { url in Result { try Data(contentsOf: url) } })
            }
        }
        #expect(try downloaded.get() == Data("payload".utf8))
        #expect(server.requests(path: "/file").count == 2)

        let source = try makePatternFile(size: 11 << 20)
        defer { try? FileManager.default.removeItem(at: source) }
        let form = MultipartForm(
            parts: ["file": .file(info: MultipartFileInfo(fileName: "f", fileURL: source, mimeType: "x/y"))],
            boundary: "stack")
        let user: User = try await manager.submit(PutUpload(multipart: form))
        #expect(user == User(id: 1, name: "big"))
        let uploads = server.requests(path: "/upload")
        #expect(uploads.count == 2)
        #expect(uploads.allSatisfy { parseMultipart($0.body, boundary: "stack")?.first?.body.count == 11 << 20 })
    }

    @Test("Cancel stops a download at once: the handler gets URLError(.cancelled) and the server sees the hang-up")
    func cancelStopsTransfer() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/stall") { _ in
            // The server counts a hang-up only while it pauses, so the first half (32 KiB) goes
            // out in one write: the client cannot see a byte, and cancel, before the pause. (With
            // 1 MiB in 16 KiB writes, a client that cancelled while the server was still writing
            // the first half under ThreadSanitizer was never counted: the write failed instead.)
            LoopbackResponse(status: 200, body: Data(count: 64 << 10)).with {
                $0.delayMidBody = 300
                $0.chunkSize = 64 << 10
            }
        }
        let manager = makeManager(server: server)
        let progress = Recorder<Double>()
        let started = Date()
        let result: Result<URL, any Error> = await waitFor { done in
            let handle = manager.submitBackgroundDownload(
                FileRequest(path: "stall"), progress: { progress.append($0) }, completionHandler: done)
            Task {
                // Cancel once the body has started to flow.
                while progress.values.isEmpty { try? await Task.sleep(nanoseconds: 5_000_000) }
                handle?.cancel()
            }
        }
        #expect((result.failure as? URLError)?.code == .cancelled, "as Y-Network's URLSession task reported it")
        // Far below the 300 s stall; generous because under ThreadSanitizer tasks wait for threads.
        #expect(Date().timeIntervalSince(started) < 200)
        for _ in 0..<20000 where server.clientHangUpCount == 0 { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(server.clientHangUpCount >= 1)
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension Result {
    /// The error, for a failure.
    fileprivate var failureValue: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
