#if canImport(CCurl)
    import Foundation
    @testable import GentleNetworking
    import GentleNetworkingTesting
    import Testing

    /// The paths this process has open whose path starts with `prefix` (from /proc/self/fd).
    private func openFiles(prefix: String) -> [String] {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") }
            .filter { $0.hasPrefix(prefix) }
    }

    @Suite("CurlTransport transfers: redirects of uploads, and no descriptor left open")
    struct CurlTransferEdgeTests {
        @Test("A file body never goes past the length it had when opened, and one that shrank fails the upload")
        func fileBodyReads() throws {
            let directory = makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("body.bin")
            try Data(repeating: 0x41, count: 100).write(to: file)
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 1)
            defer { buffer.deallocate() }
            func read(size: Int64, steps: Int) -> [CurlEasyRequest.FileRead] {
                let descriptor = open(file.path, O_RDONLY)
                defer { close(descriptor) }
                var sent: Int64 = 0
                return (0..<steps).map { _ in
                    let result = CurlEasyRequest.readFileBody(
                        descriptor, size: size, read: sent, into: buffer, capacity: 64)
                    if case .bytes(let count) = result { sent += Int64(count) }
                    return result
                }
            }
            // Declared 10 (the file grew to 100 since): 10 bytes, then the end.
            #expect(read(size: 10, steps: 3) == [.bytes(10), .bytes(0), .bytes(0)])
            // Declared 100, capacity 64: 64 + 36, then the end.
            #expect(read(size: 100, steps: 3) == [.bytes(64), .bytes(36), .bytes(0)])
            // Declared 200 (the file shrank to 100 since): 100 bytes, then a failure, not a wait.
            let shrank = read(size: 200, steps: 3)
            #expect(shrank.prefix(2) == [.bytes(64), .bytes(36)])
            guard case .failed(let message) = shrank[2] else {
                Issue.record("expected a failure, got \(shrank)")
                return
            }
            #expect(message.contains("100 of its 200 bytes"))
        }

        @Test("A file that is not regular (a device, a FIFO with no writer) is .invalidRequest, nothing sent")
        func notRegularFile() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let directory = makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let fifo = directory.appendingPathComponent("pipe")
            #expect(mkfifo(fifo.path, 0o600) == 0)
            var request = URLRequest(url: server.url("/upload"))
            request.httpMethod = "PUT"
            let upload = request
            // /proc/self/status: a "regular" file of size 0 with content, which went out as an
            // empty body.
            for file in [URL(fileURLWithPath: "/dev/zero"), fifo, URL(fileURLWithPath: "/proc/self/status")] {
                // Before the fix, /dev/zero went out as an empty body (its st_size is 0) and the
                // FIFO held a pool thread in open(2) for good.
                let result = await outcome(within: 10) {
                    let (_, response) = try await CurlTransport().upload(for: upload, fromFile: file)
                    return "\(response.statusCode)"
                }
                #expect(result.code == .invalidRequest, "\(file.path): \(result.description)")
            }
            #expect(server.acceptedConnectionCount == 0, "\(server.receivedRequests)")
            // A regular empty file is an empty body, sent.
            server.route("PUT", "/upload") { request in .text("\(request.body.count)") }
            let empty = directory.appendingPathComponent("empty")
            try Data().write(to: empty)
            let (data, _) = try await CurlTransport().upload(for: upload, fromFile: empty)
            #expect(String(decoding: data, as: UTF8.self) == "0")
        }

        @Test("An upload answered 303 follows with a GET and no body; the file is sent once")
        func uploadSeeOther() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("POST", "/upload") { _ in .redirect(to: "/result", status: 303) }
            server.route("GET", "/result") { _ in .text("stored") }
            let directory = makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("body.bin")
            let bytes = patternBytes(200_000, multiplier: 1)
            try bytes.write(to: file)

            var request = URLRequest(url: server.url("/upload"))
            request.httpMethod = "POST"
            let (data, response) = try await CurlTransport().upload(for: request, fromFile: file)

            #expect(response.statusCode == 200)
            #expect(data == Data("stored".utf8))
            #expect(server.requests(path: "/upload").map(\.body) == [bytes])
            let followUp = try #require(server.requests(path: "/result").first)
            #expect(followUp.method == "GET")
            #expect(followUp.body.isEmpty)
            #expect(server.receivedRequests.count == 2)
        }

        @Test(
            "A PUT upload on a reused connection that died is sent again on a new one (libcurl rewinds the file); a POST is not, without an Idempotency-Key"
        )
        func uploadOnDeadConnection() async throws {
            let directory = makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("body.bin")
            let bytes = patternBytes(50_000, multiplier: 7)
            try bytes.write(to: file)
            // (method, Idempotency-Key, sent again): PUT is idempotent; a POST may have been
            // acted on by a server that read it and then closed without an answer.
            let cases: [(String, String?, Bool)] = [("PUT", nil, true), ("POST", nil, false), ("POST", "k-1", true)]
            for (method, key, replayed) in cases {
                let server = try LoopbackServer()
                defer { server.shutdown() }
                server.route("GET", "/warm") { _ in .text("warm") }
                // The first upload arrives on the kept-alive connection, which then closes unanswered.
                server.route(method, "/up", handler: LoopbackServer.sequence([.raw(""), .text("stored")]))
                let transport = try CurlTransport()
                _ = try await transport.data(for: URLRequest(url: server.url("/warm")))

                var request = URLRequest(url: server.url("/up"))
                request.httpMethod = method
                if let key { request.setValue(key, forHTTPHeaderField: "Idempotency-Key") }
                let label = "\(method) \(key ?? "without a key")"
                do {
                    let (data, response) = try await transport.upload(for: request, fromFile: file)
                    #expect(replayed, "\(label): sent again")
                    #expect(response.statusCode == 200 && String(decoding: data, as: UTF8.self) == "stored")
                } catch let error as TransportError {
                    #expect(!replayed, "\(label): \(error)")
                    #expect(error.code == .connectionLost, "\(label): \(error)")
                }
                let uploads = server.requests(path: "/up")
                #expect(uploads.count == (replayed ? 2 : 1), "\(label)")
                #expect(uploads.allSatisfy { $0.body == bytes }, "\(label): \(uploads.map(\.body.count))")
            }
        }

        @Test(
            "HTTP/2: POSTs on a connection the server closes with GOAWAY (nginx keepalive_requests) are resent by libcurl and succeed, each processed once"
        )
        func http2GoawayResendsPosts() async throws {
            let pki = try await TestPKI.make()
            defer { try? FileManager.default.removeItem(at: pki.directory.deletingLastPathComponent()) }
            let nginx = try NginxServer(
                tls: NginxServer.TLS(certificatePath: pki.chainPath, keyPath: pki.leafKeyPath), serverName: "localhost",
                extraServerConfig: "keepalive_requests 2; location = /post { return 200 \"posted\"; }")
            defer { nginx.stop() }
            let leaf = try CertificatePinning.publicKeyHash(ofCertificatePEM: try pki.pem(pki.leafPath))
            let transport = PinningTransport(pinnedDomains: [
                "localhost": PublicKeyPinningEvaluator(pinnedKeyHashes: [leaf], performDefaultValidation: false)
            ])
            let base = try #require(URL(string: "https://localhost:\(nginx.port)"))
            _ = try await transport.data(for: URLRequest(url: base.appendingPathComponent("warm")))
            // Streams above the GOAWAY's last one were never processed (RFC 9113 §8.7): libcurl
            // sends them again on a new connection, which must not be refused as a replay.
            let results = await withTaskGroup(of: String.self) { group in
                for index in 0..<6 {
                    group.addTask {
                        var request = URLRequest(url: base.appendingPathComponent("post"))
                        request.httpMethod = "POST"
                        request.httpBody = Data("n=\(index)".utf8)
                        do {
                            let (data, _) = try await transport.data(for: request)
                            return String(decoding: data, as: UTF8.self)
                        } catch {
                            return "\(error)"
                        }
                    }
                }
                return await group.reduce(into: [String]()) { $0.append($1) }
            }
            // None is refused as a replay (the rule is for plain http). libcurl 7.88 itself
            // sometimes fails a stream caught by the GOAWAY with "Error in the HTTP2 framing
            // layer" (CURLE_HTTP2; seen once in CI, 1 of 6): that is libcurl's, not a refusal.
            let refused = results.filter { $0.contains("is not sent again") }
            #expect(refused.isEmpty, "\(results)")
            let succeeded = results.filter { $0 == "posted" }.count
            #expect(succeeded >= 4, "\(results)")
            let posts = await nginx.accessLog(atLeast: 1 + succeeded).filter { $0.contains("POST /post") }
            #expect(posts.count >= succeeded && posts.count <= 6, "\(posts)")
        }

        @Test("An in-memory POST on a reused connection that died is not sent again: .connectionLost; a GET is")
        func inMemoryPostOnDeadConnection() async throws {
            for method in ["POST", "PATCH", "GET"] {
                let server = try LoopbackServer()
                defer { server.shutdown() }
                server.route("GET", "/warm") { _ in .text("warm") }
                server.route(method, "/charge", handler: LoopbackServer.sequence([.raw(""), .text("ok")]))
                let transport = try CurlTransport()
                _ = try await transport.data(for: URLRequest(url: server.url("/warm")))
                var request = URLRequest(url: server.url("/charge"))
                request.httpMethod = method
                if method != "GET" { request.httpBody = Data("amount=100".utf8) }
                do {
                    let (data, _) = try await transport.data(for: request)
                    #expect(method == "GET", "\(method) was sent again")
                    #expect(String(decoding: data, as: UTF8.self) == "ok")
                } catch let error as TransportError {
                    #expect(method != "GET" && error.code == .connectionLost, "\(method): \(error)")
                }
                #expect(server.requests(path: "/charge").count == (method == "GET" ? 2 : 1), "\(method)")
            }
        }

        @Test("A GET upload goes as a POST, and a 307 keeps the POST and the whole file")
        func getUploadTemporaryRedirect() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("POST", "/upload") { _ in .redirect(to: "/b", status: 307) }
            server.route(nil, "/b") { request in .text("\(request.method) \(request.body.count)") }
            let directory = makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("body.bin")
            let bytes = Data(repeating: 0x5A, count: 4_096)
            try bytes.write(to: file)

            let (data, _) = try await CurlTransport().upload(
                for: URLRequest(url: server.url("/upload")), fromFile: file)

            #expect(String(decoding: data, as: UTF8.self) == "POST 4096")
            #expect(server.requests(path: "/b").map(\.body) == [bytes])
        }

        @Test("An upload answered 307 sends the same method and the whole file again to the new location")
        func uploadTemporaryRedirect() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("PUT", "/old") { _ in .redirect(to: "/new", status: 307) }
            server.route("PUT", "/new") { request in .text("got \(request.body.count)") }
            let directory = makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("body.bin")
            let bytes = Data(repeating: 0x42, count: 300_000)
            try bytes.write(to: file)

            var request = URLRequest(url: server.url("/old"))
            request.httpMethod = "PUT"
            let (data, _) = try await CurlTransport().upload(for: request, fromFile: file)

            #expect(data == Data("got 300000".utf8))
            #expect(server.requests(path: "/old").map(\.body) == [bytes])
            #expect(server.requests(path: "/new").map(\.body) == [bytes])
        }

        @Test("Transfers that fail before they start, or are cancelled first, leave no file open")
        func noDescriptorLeaks() async throws {
            let directory = makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("body.bin")
            try Data("x".utf8).write(to: file)
            let transport = try CurlTransport()
            // Not http(s): the easy request refuses it after the file was opened.
            let ftp = URLRequest(url: try #require(URL(string: "ftp://127.0.0.1/upload")))
            for _ in 0..<5 {
                await #expect(throws: TransportError.self) { _ = try await transport.upload(for: ftp, fromFile: file) }
                await #expect(throws: TransportError.self) {
                    _ = try await transport.download(for: ftp, to: directory.appendingPathComponent("out"))
                }
            }
            // Cancelled before the transfer starts.
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let request = URLRequest(url: server.url("/x"))
            for _ in 0..<5 {
                let task = Task {
                    withUnsafeCurrentTask { $0?.cancel() }
                    _ = try await transport.upload(for: request, fromFile: file)
                }
                await #expect(throws: CancellationError.self) { try await task.value }
            }
            #expect(openFiles(prefix: directory.path) == [])
        }
    }
#endif
