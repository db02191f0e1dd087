#if canImport(CCurl)
    import Foundation
    @testable import GentleNetworking
    import GentleNetworkingTesting
    import Testing

    @Suite("CurlTransport specifics")
    struct CurlTransportTests {
        @Test(
            "gzip, deflate, br and zstd bodies are decoded",
            arguments: [
                ("gzip", ["gzip", "-c"]), ("br", ["brotli", "-c"]), ("zstd", ["zstd", "-c", "-q"]),
                (
                    "deflate",
                    [
                        "python3", "-c",
                        "import sys,zlib; sys.stdout.buffer.write(zlib.compress(sys.stdin.buffer.read()))",
                    ]
                ),
            ])
        func decoding(encoding: String, command: [String]) async throws {
            let plain = Data(String(repeating: #"{"id":1,"property":"squeeze me"}"#, count: 1).utf8)
            let compressed = try await compress(plain, with: command)
            #expect(compressed != plain)
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/c") { _ in
                LoopbackResponse(
                    status: 200, headers: [("Content-Encoding", encoding), ("Content-Type", "application/json")],
                    body: compressed)
            }
            let (data, _) = try await CurlTransport().data(for: URLRequest(url: server.url("/c")))
            #expect(data == plain)
            let offered = try #require(server.receivedRequests.first?.header("Accept-Encoding"))
            for name in ["gzip", "deflate", "br", "zstd"] {
                #expect(offered.contains(name), "Accept-Encoding offers \(name): \(offered)")
            }
        }

        @Test("Headers: the caller's are sent as given, no Expect or form Content-Type is added, a User-Agent is")
        func headers() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route(nil, "/h") { _ in .status(204) }
            var request = URLRequest(url: server.url("/h"))
            request.httpMethod = "PATCH"
            request.httpBody = Data(repeating: 0x41, count: 300_000)
            request.setValue("abc", forHTTPHeaderField: "X-Custom")
            _ = try await CurlTransport().data(for: request)
            let seen = try #require(server.receivedRequests.first)
            #expect(seen.method == "PATCH")
            #expect(seen.body.count == 300_000)
            #expect(seen.header("X-Custom") == "abc")
            #expect(seen.header("Expect") == nil)
            #expect(seen.header("Content-Type") == nil)
            #expect(seen.header("User-Agent")?.hasPrefix("GentleNetworking libcurl/") == true)
        }

        @Test("Without a body: no Expect, Content-Type or suppression lines on the wire; an empty POST says its length")
        func bodilessHeaders() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route(nil, "/h") { _ in .status(204) }
            let transport = try CurlTransport()
            for method in ["GET", "DELETE", "PUT", "OPTIONS", "HEAD", "POST"] {
                var request = URLRequest(url: server.url("/h"))
                request.httpMethod = method
                request.setValue("1", forHTTPHeaderField: "X-Trace")
                _ = try await transport.data(for: request)
            }
            let seen = server.receivedRequests
            #expect(seen.map(\.method) == ["GET", "DELETE", "PUT", "OPTIONS", "HEAD", "POST"])
            for request in seen {
                #expect(request.header("Expect") == nil, "\(request.method)")
                #expect(request.header("Content-Type") == nil, "\(request.method)")
                #expect(request.header("X-Trace") == "1", "\(request.method)")
                #expect(request.header("User-Agent")?.hasPrefix("GentleNetworking libcurl/") == true)
                #expect(request.body.isEmpty)
            }
            #expect(seen.last?.header("Content-Length") == "0")
        }

        @Test("A download's or a stream's handle (a 1 MiB receive buffer) is freed, not pooled; a small request's is")
        func largeBufferHandlesAreNotPooled() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/small") { _ in .text("ok") }
            let transport = try CurlTransport()
            /// The pool's idle count once the loop has cleaned up (it does so just after resuming).
            func settledIdleCount(_ expected: Int) async throws -> Int {
                // Up to 120 s: a starved run can hold the loop thread for seconds.
                for _ in 0..<24_000 where transport.handles.idleCount != expected {
                    try await Task.sleep(nanoseconds: 5_000_000)
                }
                return transport.handles.idleCount
            }
            _ = try await transport.data(for: URLRequest(url: server.url("/small")))
            #expect(try await settledIdleCount(1) == 1)
            let destination = FileManager.default.temporaryDirectory.appendingPathComponent("pool-\(UUID()).txt")
            defer { try? FileManager.default.removeItem(at: destination) }
            _ = try await transport.download(for: URLRequest(url: server.url("/small")), to: destination)
            #expect(try String(contentsOf: destination, encoding: .utf8) == "ok")
            #expect(try await settledIdleCount(0) == 0)  // took the pooled handle, then freed it
            _ = try await transport.data(for: URLRequest(url: server.url("/small")))
            #expect(try await settledIdleCount(1) == 1)
            let (stream, _) = try await transport.stream(for: URLRequest(url: server.url("/small")))
            var received = Data()
            for try await chunk in stream { received += chunk }
            #expect(received == Data("ok".utf8))
            #expect(try await settledIdleCount(0) == 0)
            #expect(server.receivedRequests.count == 4)
        }

        @Test(
            "libcurl's receive buffer: default for memory, 1 MiB for a file, a stream's bufferSize within 16 KiB – 1 MiB"
        )
        func receiveBufferSizes() {
            typealias Request = CurlEasyRequest
            #expect(Request.receiveBufferSize(for: .memory) == nil)
            #expect(Request.receiveBufferSize(for: .file(-1)) == 1 << 20)
            for (bufferSize, expected) in [(1, 16 << 10), (4096, 16 << 10), (64 << 10, 64 << 10), (8 << 20, 1 << 20)] {
                let buffer = ChunkBuffer<CurlStreamResumer>(highWater: bufferSize)
                #expect(Request.receiveBufferSize(for: .stream(buffer)) == expected, "\(bufferSize)")
            }
        }

        @Test("Redirects: 303 turns POST into GET without the body; 307 keeps both")
        func redirectMethods() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("POST", "/see-other") { _ in .redirect(to: "/landing", status: 303) }
            server.route("POST", "/temporary") { _ in .redirect(to: "/landing", status: 307) }
            server.route(nil, "/landing") { request in .text("\(request.method) \(request.body.count)") }
            let transport = try CurlTransport()
            for (path, expected) in [("/see-other", "GET 0"), ("/temporary", "POST 4")] {
                var request = URLRequest(url: server.url(path))
                request.httpMethod = "POST"
                request.httpBody = Data("data".utf8)
                let (body, response) = try await transport.data(for: request)
                #expect(String(decoding: body, as: UTF8.self) == expected)
                #expect(response.url?.path == "/landing")
            }
        }

        @Test("The default transport on Linux is the shared CurlTransport")
        func defaultOnLinux() {
            #expect(DefaultTransport.make() is CurlTransport)
            let serviceTransport = HTTPNetworkService(authService: InMemoryAuthService()).transport
            #expect((serviceTransport as? RetryTransport)?.inner is CurlTransport, "retries over it, as the original")
            #expect(((serviceTransport as? RetryTransport)?.inner as? CurlTransport) === CurlTransport.shared)
            #expect((DefaultTransport.make() as? CurlTransport) === CurlTransport.shared)
        }

        @Test("The event loop's thread is named gentle.curl, as debuggers and /proc show it")
        func loopThreadName() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/x") { _ in .text("ok") }
            let transport = try CurlTransport()
            _ = try await transport.data(for: URLRequest(url: server.url("/x")))
            let names = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").map {
                (try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8)) ?? ""
            }
            #expect(names.contains("gentle.curl\n"))
            withExtendedLifetime(transport) {}
        }

        @Test("A total timeout is honoured")
        func totalTimeout() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/slow") { _ in
                LoopbackResponse.text(String(repeating: "x", count: 100)).with { $0.delayMidBody = 300 }
            }
            let transport = try CurlTransport(configuration: CurlTransport.Configuration(totalTimeout: 0.3))
            // The idle timeout (600 s) and the server's stall (300 s) are far beyond the bound
            // below, so only the total timeout can end the request in time. The bound is loose
            // because the suite can starve the cooperative pool: under TSan in CI, a test that
            // only parses dates took 65 s, and this one once 60.4 s with a 60 s bound.
            var request = URLRequest(url: server.url("/slow"))
            request.timeoutInterval = 600
            let started = Date()
            await #expect {
                _ = try await transport.data(for: request)
            } throws: { error in
                (error as? TransportError)?.code == .timedOut
            }
            #expect(Date().timeIntervalSince(started) < 240)
        }
    }
#endif

#if canImport(CCurl)
    final class ProgressLog: Sendable {
        private let values = Locked<[TransferProgress]>([])
        func record(_ progress: TransferProgress) { values.withLock { $0.append(progress) } }
        var all: [TransferProgress] { values.current }
    }

    @Suite("CurlTransport transfers: download, upload, stream")
    struct CurlTransferTests {
        @Test("download(for:to:) writes the body to a file, reports progress to 100%, and leaves no partial file")
        func download() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let payload = patternBytes(8 << 20, multiplier: 31)
            server.route("GET", "/big") { _ in
                LoopbackResponse(status: 200, headers: [("Content-Type", "application/octet-stream")], body: payload)
            }
            server.route("GET", "/moved") { _ in .redirect(to: "/big") }
            let directory = makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let destination = directory.appendingPathComponent("big.bin")
            let log = ProgressLog()
            let response = try await CurlTransport().download(
                for: URLRequest(url: server.url("/moved")), to: destination, progress: { log.record($0) })
            #expect(response.statusCode == 200)
            #expect(try Data(contentsOf: destination) == payload)
            #expect(log.all.last?.bytesReceived == Int64(payload.count))
            #expect(log.all.last?.fractionReceived == 1)
            #expect(log.all.count > 1)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["big.bin"])
        }

        @Test("A redirect's own body is not reported as progress: the first report of completion is the last")
        func redirectBodyNotProgress() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let payload = Data(repeating: 7, count: 1 << 20)
            server.route("GET", "/big") { _ in
                LoopbackResponse(status: 200, body: payload).with { $0.chunkSize = 64 << 10 }
            }
            // A 302 with a body and its length, as nginx and object stores send them.
            server.route("GET", "/moved") { _ in
                LoopbackResponse(status: 302, headers: [("Location", "/big")], body: Data("Found".utf8))
            }
            let directory = makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let log = ProgressLog()
            _ = try await CurlTransport().download(
                for: URLRequest(url: server.url("/moved")), to: directory.appendingPathComponent("big.bin"),
                progress: { log.record($0) })
            // Before: the 302's 5 bytes were reported, complete (5 of 5), then the real body from 0.
            #expect(!log.all.contains { $0.expectedBytesToReceive == 5 }, "\(log.all)")
            #expect(log.all.firstIndex { $0.fractionReceived == 1 } == log.all.count - 1)
            #expect(log.all.last?.bytesReceived == Int64(payload.count))

            // A 3xx that is the answer (no Location) is reported like any other response.
            server.route("GET", "/final") { _ in LoopbackResponse(status: 302, body: Data("no location".utf8)) }
            let final = ProgressLog()
            let response = try await CurlTransport().download(
                for: URLRequest(url: server.url("/final")), to: directory.appendingPathComponent("final.txt"),
                progress: { final.record($0) })
            #expect(response.statusCode == 302)
            #expect(final.all.last?.bytesReceived == 11)
        }

        @Test("A failed download leaves no file behind")
        func failedDownload() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/cut") { _ in
                LoopbackResponse.text(String(repeating: "x", count: 100_000)).with { $0.closeMidBody = true }
            }
            let directory = makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            await #expect {
                _ = try await CurlTransport().download(
                    for: URLRequest(url: server.url("/cut")), to: directory.appendingPathComponent("f"))
            } throws: { error in
                (error as? TransportError)?.code == .truncatedBody
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        }

        @Test("An upload the server answers early (413 before reading the body): the last progress says what was sent")
        func uploadAnsweredEarly() async throws {
            let nginx = try NginxServer(extraServerConfig: "location = /early { return 413; }")
            defer { nginx.stop() }
            let directory = makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("upload.bin")
            let size = 32 << 20
            try patternBytes(size, multiplier: 3).write(to: file)
            var request = URLRequest(url: nginx.baseURL.appendingPathComponent("early"))
            request.httpMethod = "POST"
            let log = ProgressLog()
            let (_, response) = try await CurlTransport().upload(
                for: request, fromFile: file, progress: { log.record($0) })
            #expect(response.statusCode == 413)
            // libcurl stops sending at the early answer; the report used to say all 32 MiB went.
            let last = try #require(log.all.last)
            #expect(last.bytesSent < Int64(size), "\(last)")
            #expect(last.fractionSent.map { $0 < 1 } ?? false, "\(last)")
        }

        @Test("upload(for:fromFile:) streams the file as the body and reports progress to 100%")
        func upload() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route(nil, "/up") { request in
                .text(
                    "\(request.method) \(request.body.count) \(SHA256Digest.hash(request.body).base64EncodedString())")
            }
            let directory = makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("upload.bin")
            let payload = patternBytes(6 << 20, multiplier: 7)
            try payload.write(to: file)
            for method in ["POST", "PUT"] {
                var request = URLRequest(url: server.url("/up"))
                request.httpMethod = method
                request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
                let log = ProgressLog()
                let (body, _) = try await CurlTransport().upload(
                    for: request, fromFile: file, progress: { log.record($0) })
                #expect(
                    String(decoding: body, as: UTF8.self)
                        == "\(method) \(payload.count) \(SHA256Digest.hash(payload).base64EncodedString())")
                #expect(log.all.last?.bytesSent == Int64(payload.count))
                #expect(log.all.last?.fractionSent == 1)
            }
            #expect(
                server.requests(path: "/up").map { $0.header("Content-Length") } == [
                    "\(payload.count)", "\(payload.count)",
                ])
        }

        @Test("stream(for:) delivers the head first, then chunks, and pauses the socket while the consumer is behind")
        func streamWithBackpressure() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let size = 48 << 20
            server.route("GET", "/firehose") { _ in
                LoopbackResponse(
                    status: 200, headers: [("X-Kind", "firehose")], body: Data(repeating: 0x5A, count: size))
            }
            let (stream, response) = try await CurlTransport().stream(
                for: URLRequest(url: server.url("/firehose")), bufferSize: 256 * 1024)
            #expect(response.statusCode == 200)
            #expect(response.value(forHTTPHeaderField: "X-Kind") == "firehose")
            var iterator = stream.makeAsyncIterator()
            var received = try #require(try await iterator.next()).count
            try await Task.sleep(nanoseconds: 700_000_000)
            #expect(server.completedResponseCount == 0, "the server is held back while the consumer sleeps")
            while let chunk = try await iterator.next() { received += chunk.count }
            #expect(received == size)
            // The server counts the response once its last write returns, which can come well
            // after the client has read the last byte in a starved run.
            let deadline = Date().addingTimeInterval(120)
            while server.completedResponseCount == 0, Date() < deadline {
                try await Task.sleep(nanoseconds: 10_000_000)
            }
            #expect(server.completedResponseCount == 1)
        }

        @Test("Cancelling a stream ends it with CancellationError")
        func cancelStream() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            // Every wait survives a stalled run: under TSan the whole cooperative pool once stalled
            // past 60 s, the request's default idle timeout, and libcurl timed the stream out first.
            server.route("GET", "/endless") { _ in
                LoopbackResponse.text("start").with { $0.delayMidBody = 900 }
            }
            var request = URLRequest(url: server.url("/endless"))
            request.timeoutInterval = 1200
            let (stream, _) = try await CurlTransport().stream(for: request)
            let started = Locked(false)
            let consumer = Task {
                var total = 0
                for try await chunk in stream {
                    total += chunk.count
                    started.withLock { $0 = true }
                }
                return total
            }
            let deadline = Date().addingTimeInterval(240)
            while !started.current, Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
            let cancelledAt = Date()
            consumer.cancel()
            await #expect(throws: CancellationError.self) { _ = try await consumer.value }
            #expect(Date().timeIntervalSince(cancelledAt) < 240, "far below the server's 900 s stall")
            let hangUpDeadline = Date().addingTimeInterval(120)
            while server.clientHangUpCount == 0, Date() < hangUpDeadline {
                try await Task.sleep(nanoseconds: 10_000_000)
            }
            #expect(server.clientHangUpCount == 1, "the transfer was abandoned on the wire")
        }
    }
#endif

#if canImport(CCurl)
    @Suite("Proxies from the environment")
    struct CurlProxyTests {
        /// The gentle-demo executable built next to this test bundle.
        var demoExecutable: URL {
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
                "gentle-demo")
        }

        @Test("http_proxy is honoured by the default transport (in a child process, so no other test is affected)")
        func httpProxyFromEnvironment() async throws {
            let proxy = try LoopbackServer(fallback: { request in
                .json(#"{"token":"via-proxy"}"#).adding(header: "X-Proxied-Target", request.target)
            })
            defer { proxy.shutdown() }
            let executable = demoExecutable
            #expect(FileManager.default.isExecutableFile(atPath: executable.path), "build gentle-demo first")
            let status = try await offCooperativePool { () -> Int32 in
                let process = Process()
                process.executableURL = executable
                process.arguments = ["--base-url", "http://api.example.invalid"]
                var environment = ProcessInfo.processInfo.environment
                for name in ["no_proxy", "NO_PROXY", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"] {
                    environment[name] = nil
                }
                environment["http_proxy"] = proxy.baseURL.absoluteString
                process.environment = environment
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try ProcessLauncher.run(process)
                let deadline = Date().addingTimeInterval(60)
                while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
                if process.isRunning { process.terminate() }
                return process.terminationStatus
            }
            let first = try #require(proxy.receivedRequests.first, "the request went to the proxy")
            #expect(first.target == "http://api.example.invalid/api/signIn", "absolute-form target, as proxies get")
            #expect(first.method == "POST")
            #expect(first.header("Host") == "api.example.invalid")
            _ = status  // the demo fails later (the proxy is not a real API); only the routing matters
        }
    }
#endif
