import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A minimal raw-socket HTTP client, so the server is tested without any HTTP library between.
struct RawClient {
    let descriptor: Int32

    init(port: UInt16) throws {
        guard let descriptor = POSIXSocket.connectLoopback(port: port) else { throw POSIXError(.ECONNREFUSED) }
        self.descriptor = descriptor
        var timeout = timeval(tv_sec: 120, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        #if canImport(Glibc)
            _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        #else
            var yes: Int32 = 1
            setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
            _ = bytes.withUnsafeBytes { Darwin.send(descriptor, $0.baseAddress, $0.count, 0) }
        #endif
    }

    /// Reads until `marker` has been seen `count` times or the peer closes.
    func read(until marker: String, count: Int = 1) -> String {
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while String(decoding: received, as: UTF8.self).components(separatedBy: marker).count - 1 < count {
            let n = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            // A receive timeout makes recv fail with EINTR when a debugger attaches: not the end.
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            received.append(contentsOf: buffer[0..<n])
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Reads until the peer closes the connection.
    func readToEnd() -> String {
        read(until: "\u{0}never\u{0}")
    }

    func close() {
        POSIXSocket.closeDescriptor(descriptor)
    }
}

#if os(Linux)
    let isLinux = true
#else
    let isLinux = false
#endif

/// The kernel inodes of this machine's TCP sockets bound locally to `port` (IPv4). A socket
/// that is still open in some process has a non-zero inode; TIME_WAIT leftovers have none.
func openSocketInodes(port: UInt16) -> [String] {
    // procfs reports a size of 0, so read to the end explicitly rather than trusting stat.
    guard let handle = FileHandle(forReadingAtPath: "/proc/net/tcp") else { return ["<no /proc/net/tcp>"] }
    defer { try? handle.close() }
    let table = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
    let hexPort = String(format: ":%04X", port)
    return table.split(separator: "\n").dropFirst().compactMap { line in
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count > 9, fields[1].hasSuffix(hexPort), fields[9] != "0" else { return nil }
        return String(fields[9])
    }
}

/// The names of this process's threads that start with `prefix`.
func threadNames(withPrefix prefix: String) -> [String] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.compactMap { task in
        let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return name.flatMap { $0.hasPrefix(prefix) ? $0 : nil }
    }
}

/// Arguments to `url(_:)` that would leave the server if taken as URL references: other hosts,
/// schemes, user info, ports, backslashes, fragments, control characters.
let hostilePaths = [
    "//evil.example/x", "///evil.example/x", "//evil.example:80/x", "//user:pw@evil.example/",
    "http://evil.example/", "https://evil.example:443/x", "HTTP://evil.example", "http:evil.example", "a:b",
    "javascript:alert(1)", "mailto:a@evil.example", "file:///etc/passwd", "@evil.example", ":8080/x",
    "\\evil.example\\x", "\\/evil.example", "/\\evil.example", "[::1]", "//[::1]:80/", "//127.0.0.1:1/",
    "..//evil.example", "?//evil.example", "#//evil.example", "%2F%2Fevil.example", "", " ", "\u{0}",
    "\r\nHost: evil.example", "//évil.example/", "/a?b=c#//evil.example", "?", "#", "%", "//%",
]

@Suite("The loopback HTTP server")
struct LoopbackServerTests {
    @Test("Binds 127.0.0.1 on a kernel-chosen port and reports its base URL")
    func binds() throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        #expect(server.port > 0)
        #expect(server.baseURL.absoluteString == "http://127.0.0.1:\(server.port)")
        #expect(server.url("/a?b=1").absoluteString == "http://127.0.0.1:\(server.port)/a?b=1")
    }

    @Test("url(_:) takes its argument as a path (and query) on this server, never another host")
    func urlStaysOnServer() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(nil, prefix: "/") { request in .text(request.target) }
        let base = "http://127.0.0.1:\(server.port)"
        let expected: [(path: String, target: String)] = [
            ("/x.json", "/x.json"), ("x.json", "/x.json"), ("/a?b=c", "/a?b=c"), ("/a/b/", "/a/b/"),
            ("/a%20b?q=%2F&r=1", "/a%20b?q=%2F&r=1"), ("/a?b=c?d/e", "/a?b=c?d/e"),
            ("//evil.example/x", "/evil.example/x"), ("http://evil.example/", "/http://evil.example/"),
            ("a:b", "/a:b"), ("", "/"), ("///", "/"), ("?q=1", "/?q=1"), ("/a b#frag", "/a%20b%23frag"),
            ("/a?b=c#d", "/a?b=c%23d"), ("\\\\evil.example\\x", "/%5C%5Cevil.example%5Cx"), ("/é", "/%C3%A9"),
            ("/100%", "/100%25"), ("/%zz%4", "/%25zz%254"), ("/a\r\nHost: x", "/a%0D%0AHost:%20x"),
        ]
        for (path, target) in expected {
            #expect(server.url(path).absoluteString == base + target, "\(path)")
        }
        let session = URLSession(configuration: .ephemeral)
        for path in hostilePaths {
            let url = server.url(path)
            #expect(url.scheme == "http", "\(path) → \(url.absoluteString)")
            #expect(url.host == "127.0.0.1", "\(path) → \(url.absoluteString)")
            #expect(url.port == Int(server.port), "\(path) → \(url.absoluteString)")
            #expect(url.user == nil && url.fragment == nil, "\(path) → \(url.absoluteString)")
            #expect(url.absoluteString.hasPrefix(base + "/"), "\(path) → \(url.absoluteString)")
            // Read back as a client would: it parses to the same server, and the request reaches it.
            let reparsed = try #require(URL(string: url.absoluteString), "\(path)")
            #expect(reparsed.host == "127.0.0.1" && reparsed.port == Int(server.port), "\(path)")
            guard url.host == "127.0.0.1", url.port == Int(server.port) else { continue }  // never leave loopback
            let (data, _) = try await URLSessionTransport(session: session).data(for: URLRequest(url: url))
            #expect(String(decoding: data, as: UTF8.self).hasPrefix("/"), "\(path)")
        }
        #expect(server.receivedRequests.count == hostilePaths.count)
    }

    @Test("Routes by method and path; handlers read method, path, query, headers and body")
    func routesAndRecords() throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("POST", "/echo") { request in
            .text(
                "\(request.method) \(request.path) q=\(request.queryValue("q") ?? "-") h=\(request.header("x-h") ?? "-") b=\(request.bodyText)"
            )
        }
        let client = try RawClient(port: server.port)
        defer { client.close() }
        client.send("POST /echo?q=a%20b HTTP/1.1\r\nHost: x\r\nX-H: v\r\nContent-Length: 5\r\n\r\nhello")
        let response = client.read(until: "b=hello")
        #expect(response.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(response.contains("POST /echo q=a b h=v b=hello"))
        let recorded = try #require(server.receivedRequests.first)
        #expect(recorded.rawQuery == "q=a%20b")
        #expect(recorded.headers.map(\.name) == ["Host", "X-H", "Content-Length"])
    }

    @Test("Unrouted paths get a 404 naming the path")
    func fallback() throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        defer { client.close() }
        client.send("GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = client.read(until: "/nothing", count: 1)
        #expect(response.hasPrefix("HTTP/1.1 404"))
    }

    @Test("Keep-alive: several requests on one connection, including a chunked body")
    func keepAliveAndChunked() throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(nil, "/e") { request in .text("[\(request.bodyText)]") }
        let client = try RawClient(port: server.port)
        defer { client.close() }
        client.send("POST /e HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
        _ = client.read(until: "[abc]")
        client.send(
            "POST /e HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n5;ext=1\r\npedia\r\n0\r\nTrailer: t\r\n\r\n"
        )
        _ = client.read(until: "[Wikipedia]")
        client.send("GET /e HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let last = client.readToEnd()
        #expect(last.contains("[]"))
        #expect(last.contains("Connection: close"))
        let requests = server.receivedRequests
        #expect(requests.count == 3)
        #expect(Set(requests.map(\.connectionID)).count == 1)
        #expect(requests[1].wasChunked)
        #expect(requests[1].bodyText == "Wikipedia")
    }

    @Test("Answers Expect: 100-continue before the body")
    func expectContinue() throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("PUT", "/u") { request in .text("got \(request.body.count)") }
        let client = try RawClient(port: server.port)
        defer { client.close() }
        client.send("PUT /u HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
        #expect(client.read(until: "\r\n\r\n").hasPrefix("HTTP/1.1 100 Continue"))
        client.send("data")
        #expect(client.read(until: "got 4").contains("got 4"))
    }

    @Test("Chunked responses are framed correctly")
    func chunkedResponse() throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/c") { _ in
            LoopbackResponse.text("abcdefghij").with {
                $0.chunked = true; $0.chunkSize = 4
            }
        }
        let client = try RawClient(port: server.port)
        defer { client.close() }
        client.send("GET /c HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = client.read(until: "0\r\n\r\n")
        #expect(response.contains("Transfer-Encoding: chunked"))
        #expect(response.hasSuffix("\r\n\r\n4\r\nabcd\r\n4\r\nefgh\r\n2\r\nij\r\n0\r\n\r\n"))
    }

    @Test("Status sequences answer in turn and repeat the last")
    func sequence() throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/flaky", handler: LoopbackServer.sequence([.status(503), .status(503), .text("ok")]))
        var statuses: [String] = []
        for _ in 0..<4 {
            let client = try RawClient(port: server.port)
            client.send("GET /flaky HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            statuses.append(String(client.readToEnd().prefix(12)))
            client.close()
        }
        #expect(statuses == ["HTTP/1.1 503", "HTTP/1.1 503", "HTTP/1.1 200", "HTTP/1.1 200"])
    }

    @Test("Fault injection: delay before headers, pause mid-body, close mid-body, raw bytes")
    func faults() throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let body = String(repeating: "z", count: 1000)
        server.route("GET", "/late") { _ in LoopbackResponse.text("late").with { $0.delayBeforeHeaders = 0.3 } }
        server.route("GET", "/pause") { _ in LoopbackResponse.text(body).with { $0.delayMidBody = 0.3 } }
        server.route("GET", "/cut") { _ in LoopbackResponse.text(body).with { $0.closeMidBody = true } }
        server.route("GET", "/raw") { _ in .raw("HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\nshort") }

        var start = Date()
        var client = try RawClient(port: server.port)
        client.send("GET /late HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(client.read(until: "late").hasSuffix("late"))
        #expect(Date().timeIntervalSince(start) >= 0.29)
        client.close()

        start = Date()
        client = try RawClient(port: server.port)
        client.send("GET /pause HTTP/1.1\r\nHost: x\r\n\r\n")
        let paused = client.read(until: String(repeating: "z", count: 1000))
        #expect(paused.hasSuffix(body))
        #expect(Date().timeIntervalSince(start) >= 0.29)
        client.close()

        client = try RawClient(port: server.port)
        client.send("GET /cut HTTP/1.1\r\nHost: x\r\n\r\n")
        let cut = client.readToEnd()
        #expect(cut.contains("Content-Length: 1000"))
        #expect(cut.components(separatedBy: "\r\n\r\n").last?.count == 500)
        client.close()

        client = try RawClient(port: server.port)
        client.send("GET /raw HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(client.readToEnd() == "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\nshort")
        client.close()
    }

    @Test(
        "Don't chunk (chunkSize Int.max) with a pause or a cut mid-body: the body goes out without overflow",
        arguments: [false, true])
    func unchunkedMidBodyFaults(chunked: Bool) throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let half = String(repeating: "z", count: 500)
        let response = LoopbackResponse.text(half + half).with {
            $0.chunked = chunked
            $0.chunkSize = .max
        }
        server.route("GET", "/pause") { _ in response.with { $0.delayMidBody = 0.05 } }
        server.route("GET", "/cut") { _ in response.with { $0.closeMidBody = true } }
        server.route("GET", "/both") { _ in
            response.with {
                $0.delayMidBody = 0.05
                $0.closeMidBody = true
            }
        }
        let piece = chunked ? "1f4\r\n\(half)\r\n" : half

        var client = try RawClient(port: server.port)
        client.send("GET /pause HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(client.readToEnd().hasSuffix("\r\n\r\n" + piece + piece + (chunked ? "0\r\n\r\n" : "")))
        client.close()
        for path in ["/cut", "/both"] {
            client = try RawClient(port: server.port)
            client.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(client.readToEnd().hasSuffix("\r\n\r\n" + piece), "\(path)")
            client.close()
        }
        #expect(server.completedResponseCount == 1)
    }

    @Test("A malformed request gets a 400 and the connection is closed")
    func malformedRequest() throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        defer { client.close() }
        client.send("NONSENSE\r\n\r\n")
        #expect(client.readToEnd().hasPrefix("HTTP/1.1 400"))
    }

    @Test("Serves many concurrent clients")
    func concurrentClients() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", prefix: "/n/") { request in
            LoopbackResponse.text(String(request.path.dropFirst(3))).with { $0.delayBeforeHeaders = 0.05 }
        }
        let session = URLSession(configuration: .ephemeral)
        let baseURL = server.baseURL
        let bodies = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let (data, _) = try await URLSessionTransport(session: session)
                        .data(for: URLRequest(url: baseURL.appendingPathComponent("n/\(index)")))
                    return String(decoding: data, as: UTF8.self)
                }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(bodies == Set((0..<64).map(String.init)))
        #expect(server.receivedRequests.count == 64)
        #expect(server.acceptedConnectionCount > 1)
    }

    // Thread names and socket inodes are read from /proc, which only Linux has.
    @Test("Shutdown closes every socket and ends every thread it started", .enabled(if: isLinux))
    func shutdownLeaksNothing() throws {
        for _ in 0..<3 {
            let server = try LoopbackServer()
            server.route("GET", "/slow") { _ in LoopbackResponse.text("x").with { $0.delayBeforeHeaders = 300 } }
            var clients: [RawClient] = []
            for _ in 0..<4 {
                let client = try RawClient(port: server.port)
                client.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
                clients.append(client)
            }
            clients.append(try RawClient(port: server.port))  // connected, idle
            let deadline = Date().addingTimeInterval(200)
            while server.receivedRequests.count < 4 || threadNames(withPrefix: server.threadNamePrefix).count < 6,
                Date() < deadline
            {
                Thread.sleep(forTimeInterval: 0.01)
            }
            #expect(
                threadNames(withPrefix: server.threadNamePrefix).count == 6,
                "accept + 5 connections: \(threadNames(withPrefix: server.threadNamePrefix)), accepted \(server.acceptedConnectionCount)"
            )
            #expect(!openSocketInodes(port: server.port).isEmpty)

            let started = Date()
            server.shutdown()
            // Loose for a starved run: the handlers' delay is 300 s. (shutdown() waits at most
            // 10 s for a stuck handler, so the check that counts is the next one.)
            #expect(Date().timeIntervalSince(started) < 200, "shutdown interrupts the 300 s handler delay")
            server.shutdown()  // idempotent

            // With every client still connected, shutdown alone must end the server's threads (a
            // thread signals it is done just before it exits; give it a moment to be gone).
            let gone = Date().addingTimeInterval(120)
            while !threadNames(withPrefix: server.threadNamePrefix).isEmpty, Date() < gone {
                Thread.sleep(forTimeInterval: 0.01)
            }
            #expect(threadNames(withPrefix: server.threadNamePrefix) == [])
            for client in clients { client.close() }
            // Our client ends were closed above, so any open socket left on the port is the server's.
            #expect(openSocketInodes(port: server.port) == [])
        }
    }

    @Test(
        "Dropping the last reference shuts the server down: its threads end and its port closes", .enabled(if: isLinux))
    func releasedWhenDropped() throws {
        weak var dropped: LoopbackServer?
        var port: UInt16 = 0
        var prefix = ""
        var client: RawClient?
        do {
            let server = try LoopbackServer()
            dropped = server
            port = server.port
            prefix = server.threadNamePrefix
            server.route("GET", "/x") { _ in .text("x") }
            // A kept-alive connection: its thread waits for the next request.
            let idle = try RawClient(port: server.port)
            client = idle
            idle.send("GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(idle.read(until: "\r\n\r\nx").hasSuffix("\r\n\r\nx"))
            #expect(eventually { threadNames(withPrefix: prefix).count == 2 }, "accept + the idle connection")
        }
        defer { client?.close() }
        #expect(dropped == nil, "the server's threads must not keep it alive")
        #expect(eventually { threadNames(withPrefix: prefix).isEmpty })
        #expect(eventually { openSocketInodes(port: port).isEmpty })
        // The idle connection was closed by the server, not left open.
        #expect(client?.readToEnd() == "")
    }
}
