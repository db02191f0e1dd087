#if canImport(CCurl)
    import Foundation
    import GentleNetworking
    import GentleNetworkingTesting
    import Testing

    /// Compresses `data` with a real command-line tool, reading stdin and writing stdout.
    func compress(_ data: Data, with command: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(data)
        try input.fileHandleForWriting.close()
        let compressed = output.fileHandleForReading.readDataToEndOfFile()
        while process.isRunning { Thread.sleep(forTimeInterval: 0.005) }
        guard process.terminationStatus == 0 else {
            throw TransportError(.other, url: nil, message: "\(command) exited with \(process.terminationStatus)")
        }
        return compressed
    }

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
            let compressed = try compress(plain, with: command)
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
            #expect(HTTPNetworkService(authService: InMemoryAuthService()).transport is CurlTransport)
            #expect((DefaultTransport.make() as? CurlTransport) === CurlTransport.shared)
        }

        @Test("A total timeout is honoured")
        func totalTimeout() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/slow") { _ in
                LoopbackResponse.text(String(repeating: "x", count: 100)).with { $0.delayMidBody = 5 }
            }
            let transport = try CurlTransport(configuration: CurlTransport.Configuration(totalTimeout: 0.3))
            let started = Date()
            await #expect {
                _ = try await transport.data(for: URLRequest(url: server.url("/slow")))
            } throws: { error in
                (error as? TransportError)?.code == .timedOut
            }
            #expect(Date().timeIntervalSince(started) < 3)
        }
    }
#endif
