import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A byte-exact raw-socket client for the hostile server: no HTTP library between the test and
/// the wire, and reads that report how the stream ended (end-of-stream or which error).
private struct WireClient {
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

    func get(_ path: String, headers: String = "") {
        send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(headers)\r\n")
    }

    /// One read of up to `max` bytes: the bytes, or the errno (0 at end of stream).
    func readOnce(max: Int = 64 * 1024) -> (bytes: [UInt8], error: Int32) {
        var buffer = [UInt8](repeating: 0, count: max)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count > 0 { return (Array(buffer[0..<count]), 0) }
        return ([], count == 0 ? 0 : errno)
    }

    /// Reads until end of stream, an error, or `limit` bytes; `error` is 0 at end of stream and
    /// -1 when the limit was reached first.
    func readToEnd(limit: Int = 64 << 20) -> (bytes: [UInt8], error: Int32) {
        var received = [UInt8]()
        while received.count < limit {
            let (bytes, error) = readOnce(max: min(64 * 1024, limit - received.count))
            if bytes.isEmpty { return (received, error) }
            received += bytes
        }
        return (received, -1)
    }

    /// Reads exactly `count` bytes (fewer only when the stream ends first).
    func read(exactly count: Int) -> [UInt8] {
        var received = [UInt8]()
        while received.count < count {
            let (bytes, _) = readOnce(max: count - received.count)
            if bytes.isEmpty { break }
            received += bytes
        }
        return received
    }

    /// Reads a response head (through the blank line, one byte at a time so nothing after it is
    /// consumed).
    func readHead(limit: Int = 1 << 20) -> ParsedHead? {
        var received = [UInt8]()
        while received.count < limit {
            let (bytes, _) = readOnce(max: 1)
            guard let byte = bytes.first else { return nil }
            received.append(byte)
            if byte == 10 && received.count >= 4 && received[received.count - 4..<received.count] == [13, 10, 13, 10] {
                return ParsedHead(String(decoding: received, as: UTF8.self))
            }
        }
        return nil
    }

    /// Whether a byte or end-of-stream arrives within `milliseconds`.
    func hasActivity(milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, milliseconds) > 0
    }

    func close() {
        POSIXSocket.closeDescriptor(descriptor)
    }
}

/// A response head split into status and headers.
private struct ParsedHead {
    let text: String
    let status: Int
    let headers: [(name: String, value: String)]

    init(_ text: String) {
        self.text = text
        let lines = text.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let statusParts = lines.first?.split(separator: " ") ?? []
        self.status = statusParts.count > 1 ? Int(statusParts[1]) ?? 0 : 0
        self.headers = lines.dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
    }

    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// Polls `condition` every 10 ms for up to `seconds`.
func eventually(within seconds: TimeInterval = 120, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return condition()
}

/// Runs `tool` (looked up on PATH) with `arguments`; its exit status and standard output.
private func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32, output: Data) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [tool] + arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try ProcessLauncher.run(process)
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, data)
}

/// Writes `bytes` to a fresh temporary file and returns its path.
private func temporaryFile(_ bytes: [UInt8]) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID().uuidString)").path
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
}

/// CRC-32 the slow, obvious way, to check the fast zero-run one against.
private func referenceCRC32(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    return ~crc
}

@Suite("The hostile HTTP server")
struct HostileServerTests {
    // MARK: Basics

    @Test("Binds 127.0.0.1, answers unrouted paths 404 on a kept-alive connection, records requests")
    func basicsAndRecording() throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        #expect(server.baseURL.absoluteString == "http://127.0.0.1:\(server.port)")
        #expect(server.url("/a?b=1").absoluteString == "http://127.0.0.1:\(server.port)/a?b=1")
        #expect(server.threadNamePrefix == "H\(server.port).")
        server.route("/echo", .ok(body: Data("fine".utf8), headers: [("X-Kind", "ok")]))

        let client = try WireClient(port: server.port)
        defer { client.close() }
        client.get("/nowhere")
        let missing = try #require(client.readHead())
        #expect(missing.status == 404)
        let missingLength = try #require(Int(missing.header("Content-Length") ?? ""))
        #expect(String(decoding: client.read(exactly: missingLength), as: UTF8.self) == "No route for GET /nowhere")

        client.send("POST /echo?x=1 HTTP/1.1\r\nHost: h\r\nX-Test: yes\r\nContent-Length: 5\r\n\r\nhello")
        let head = try #require(client.readHead())
        #expect(head.status == 200)
        #expect(head.header("X-Kind") == "ok")
        #expect(head.header("Content-Length") == "4")
        #expect(client.read(exactly: 4) == Array("fine".utf8))
        client.send(
            "PUT /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n5\r\npedia\r\n0\r\n\r\n")
        #expect(client.readHead()?.status == 200)
        _ = client.read(exactly: 4)

        #expect(server.acceptedConnectionCount == 1)
        #expect(server.receivedRequests.map(\.method) == ["GET", "POST", "PUT"])
        let echoes = server.requests(path: "/echo")
        #expect(echoes.count == 2)
        let post = try #require(echoes.first)
        #expect(post.rawQuery == "x=1")
        #expect(post.header("X-Test") == "yes")
        #expect(post.headers.map(\.name) == ["Host", "X-Test", "Content-Length"])
        #expect(post.bodyText == "hello")
        #expect(echoes.last?.bodyText == "Wikipedia")
        #expect(echoes.last?.wasChunked == true)
        #expect(server.bytesSent(path: "/echo") > 0)
        #expect(server.bytesSentCount > server.bytesSent(path: "/echo"))
    }

    @Test("Routes match the exact path, ignoring the query; a later route wins")
    func routing() throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route("/a", .ok(body: Data("first".utf8)))
        server.route("/a", .ok(body: Data("second".utf8)))
        let client = try WireClient(port: server.port)
        defer { client.close() }
        client.get("/a?q=1")
        #expect(client.readHead()?.header("Content-Length") == "6")
        #expect(client.read(exactly: 6) == Array("second".utf8))
        client.get("/a/b")
        #expect(client.readHead()?.status == 404)
    }

    // MARK: Endless responses

    @Test("An endless body keeps coming until the client closes, then stops being sent", arguments: [false, true])
    func endlessBody(chunked: Bool) throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route("/feed", .endlessBody(chunked: chunked))
        let client = try WireClient(port: server.port)
        client.get("/feed")
        let head = try #require(client.readHead())
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == nil)
        if chunked {
            #expect(head.header("Transfer-Encoding") == "chunked")
            #expect(client.read(exactly: 8) == Array("10000\r\n[".utf8))
        } else {
            #expect(head.header("Connection") == "close")
            #expect(client.read(exactly: 3) == Array("[0,".utf8))
        }
        let (bytes, error) = client.readToEnd(limit: 2 << 20)
        #expect(error == -1)  // two more MiB arrived and it was still going
        #expect(bytes.count == 2 << 20)
        client.close()

        #expect(eventually { server.clientHangUpCount == 1 })
        let sent = server.bytesSent(path: "/feed")
        #expect(sent > 2 << 20)
        Thread.sleep(forTimeInterval: 0.2)
        #expect(server.bytesSent(path: "/feed") == sent)
        #expect(eventually { threadNames(withPrefix: "\(server.threadNamePrefix)c").isEmpty })
    }

    @Test("Endless headers: header lines keep coming, the head never ends")
    func endlessHeaders() throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route("/h", .endlessHeaders)
        let client = try WireClient(port: server.port)
        client.get("/h")
        let (bytes, error) = client.readToEnd(limit: 1 << 20)
        #expect(error == -1)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\nX-Endless-1: " + String(repeating: "a", count: 100) + "\r\n"))
        #expect(!text.contains("\r\n\r\n"))
        client.close()
        #expect(eventually { server.clientHangUpCount == 1 })
        let sent = server.bytesSent(path: "/h")
        Thread.sleep(forTimeInterval: 0.2)
        #expect(server.bytesSent(path: "/h") == sent)
    }

    // MARK: Compression bombs

    @Test("The zero-run CRC-32 and Adler-32 match the byte-by-byte ones, and a 10 GiB trailer is instant")
    func checksumsOfZeros() {
        for count in [0, 1, 2, 3, 1000, 70_000] {
            let zeros = [UInt8](repeating: 0, count: count)
            #expect(DeflateBomb.crc32OfZeros(Int64(count)) == referenceCRC32(zeros), "\(count) bytes")
            let b = UInt32(count % 65521)
            #expect(DeflateBomb.adler32OfZeros(Int64(count)) == b << 16 | 1)
        }
        // Computed with python3's zlib.crc32 over the zero bytes.
        #expect(DeflateBomb.crc32OfZeros(5 << 20) == 0xC93B_B375)
        #expect(DeflateBomb.crc32OfZeros(10 << 30) == 0xF41D_912F)
    }

    @Test("Bombs of awkward sizes decode byte-exactly with gzip -dc, and their size is known up front")
    func bombSizes() throws {
        for size in [0, 1, 2, 3, 4, 258, 259, 260, 261, 262, 1000, 3 * 65_536 + 17] {
            var bomb = DeflateBomb(decodedBytes: Int64(size), framing: .gzip)
            var stream = [UInt8]()
            while let chunk = bomb.nextChunk(maxBytes: 1000) { stream += chunk }
            #expect(Int64(stream.count) == bomb.compressedByteCount, "\(size) bytes")
            let path = try temporaryFile(stream)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let (status, output) = try run("gzip", ["-dc", path])
            #expect(status == 0, "gzip rejected the \(size)-byte bomb")
            #expect(output.count == size)
            #expect(output.allSatisfy { $0 == 0 })
        }
    }

    @Test("A 5 MiB gzip bomb over the socket: tiny on the wire, exactly 5 MiB of zeros through gzip -dc")
    func gzipBombOverTheWire() throws {
        let decoded = 5 << 20
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route("/bomb", .compressionBomb(decodedBytes: Int64(decoded)))
        let client = try WireClient(port: server.port)
        defer { client.close() }
        client.get("/bomb")
        let head = try #require(client.readHead())
        #expect(head.status == 200)
        #expect(head.header("Content-Encoding") == "gzip")
        #expect(head.header("Content-Length") == nil)
        let (body, error) = client.readToEnd()
        #expect(error == 0)
        #expect(body.count < decoded / 150)
        let path = try temporaryFile(body)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (status, output) = try run("gzip", ["-dc", path])
        #expect(status == 0)
        #expect(output.count == decoded)
        #expect(output.allSatisfy { $0 == 0 })
        #expect(server.clientHangUpCount == 0)
    }

    @Test("A deflate (zlib) bomb with Content-Length decodes with python3's zlib; the connection stays usable")
    func deflateBombWithLength() throws {
        let decoded = 1 << 20
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route("/bomb", .compressionBomb(decodedBytes: Int64(decoded), encoding: "deflate", declareLength: true))
        server.route("/after", .ok(body: Data("next".utf8)))
        let client = try WireClient(port: server.port)
        defer { client.close() }
        client.get("/bomb")
        let head = try #require(client.readHead())
        #expect(head.header("Content-Encoding") == "deflate")
        let length = try #require(Int(head.header("Content-Length") ?? ""))
        let body = client.read(exactly: length)
        #expect(body.count == length)
        #expect(length < decoded / 150)
        let path = try temporaryFile(body)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let script = "import sys, zlib; d = zlib.decompress(open(sys.argv[1], 'rb').read()); print(len(d), d.count(0))"
        let (status, output) = try run("python3", ["-c", script, path])
        #expect(status == 0)
        #expect(String(decoding: output, as: UTF8.self) == "\(decoded) \(decoded)\n")
        client.get("/after")
        #expect(client.readHead()?.status == 200)
        #expect(server.acceptedConnectionCount == 1)
    }

    @Test("A 10 GiB bomb streams at once and stops when the client gives up")
    func hugeBombStreams() throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route("/bomb", .compressionBomb(decodedBytes: 10 << 30))
        let client = try WireClient(port: server.port)
        client.get("/bomb")
        #expect(client.readHead()?.header("Content-Encoding") == "gzip")
        let (prefix, error) = client.readToEnd(limit: 1 << 20)
        #expect(error == -1)
        #expect(Array(prefix.prefix(3)) == [0x1F, 0x8B, 0x08])
        client.close()
        #expect(eventually { server.clientHangUpCount == 1 })
        let sent = server.bytesSent(path: "/bomb")
        #expect(sent < 40 << 20)  // a fraction of the ~68 MB stream
        Thread.sleep(forTimeInterval: 0.2)
        #expect(server.bytesSent(path: "/bomb") == sent)
    }

    @Test("A real client: curl --compressed inflates the bomb; curl timing out on an endless body is a hang-up")
    func curlAgainstTheServer() throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route("/bomb", .compressionBomb(decodedBytes: 3 << 20, declareLength: true))
        server.route("/feed", .endlessBody(chunked: true))
        let inflated = try run("curl", ["-s", "--compressed", server.url("/bomb").absoluteString])
        #expect(inflated.status == 0)
        #expect(inflated.output.count == 3 << 20)
        #expect(inflated.output.allSatisfy { $0 == 0 })
        let timedOut = try run(
            "curl", ["-s", "-o", "/dev/null", "--max-time", "0.5", server.url("/feed").absoluteString])
        #expect(timedOut.status == 28)  // CURLE_OPERATION_TIMEDOUT
        #expect(eventually { server.clientHangUpCount == 1 })
        #expect(server.bytesSent(path: "/feed") > 0)
    }

    // MARK: Slow responses

    @Test("A drip sends the head at once, then one byte per interval", arguments: [true, false])
    func drip(declareLength: Bool) throws {
        let interval = 0.05
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route("/slow", .drip(body: Data("abcdef".utf8), interval: interval, declareLength: declareLength))
        let client = try WireClient(port: server.port)
        defer { client.close() }
        client.get("/slow")
        let head = try #require(client.readHead())
        let started = Date()
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == (declareLength ? "6" : nil))
        #expect(head.header("Connection") == (declareLength ? nil : "close"))
        // The server waits `interval` before each byte, so six bytes cannot come sooner than
        // 6 × interval whatever the scheduling; the bound below leaves room for timer slack.
        let body = client.read(exactly: 6)
        let elapsed = Date().timeIntervalSince(started)
        #expect(body == Array("abcdef".utf8))
        #expect(elapsed >= 4 * interval)
        #expect(elapsed < 60, "loose for a starved run")
        if !declareLength {
            #expect(client.readOnce().error == 0)
        }
    }

    @Test("A client that leaves mid-drip is counted as a hang-up and the drip stops")
    func dripHangUp() throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route("/slow", .drip(body: Data(repeating: 0x61, count: 1000), interval: 0.02))
        let client = try WireClient(port: server.port)
        client.get("/slow")
        _ = client.readHead()
        _ = client.read(exactly: 2)
        client.close()
        #expect(eventually { server.clientHangUpCount == 1 })
        let sent = server.bytesSent(path: "/slow")
        Thread.sleep(forTimeInterval: 0.2)
        #expect(server.bytesSent(path: "/slow") == sent)
    }

    @Test("Dripped headers arrive a byte at a time and still form a valid response")
    func dripHeaders() throws {
        let interval = 0.01
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route("/slow", .dripHeaders(interval: interval))
        let client = try WireClient(port: server.port)
        defer { client.close() }
        let started = Date()
        client.get("/slow")
        let head = try #require(client.readHead())
        let elapsed = Date().timeIntervalSince(started)
        #expect(head.text == "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n")
        #expect(elapsed >= 20 * interval)
        #expect(client.read(exactly: 2) == Array("ok".utf8))
    }

    @Test("Accept-and-hang reads the request, never answers, and notices the client leaving")
    func acceptAndHang() throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route("/void", .acceptAndHang)
        let client = try WireClient(port: server.port)
        client.send("POST /void HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc")
        #expect(eventually { server.requests(path: "/void").first?.bodyText == "abc" })
        #expect(!client.hasActivity(milliseconds: 300))
        client.close()
        #expect(eventually { server.clientHangUpCount == 1 })
        #expect(server.bytesSent(path: "/void") == 0)
    }

    // MARK: Malformed framing

    @Test("Conflicting Content-Length headers are sent verbatim, then the connection closes")
    func conflictingLengths() throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route("/two", .conflictingContentLength(first: 5, second: 7, body: Data("hello".utf8)))
        server.route("/list", .contentLengthList("27, 47", body: Data("short".utf8)))
        for (path, expected) in [
            ("/two", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nhello"),
            ("/list", "HTTP/1.1 200 OK\r\nContent-Length: 27, 47\r\n\r\nshort"),
        ] {
            let client = try WireClient(port: server.port)
            defer { client.close() }
            client.get(path)
            let (bytes, error) = client.readToEnd()
            #expect(String(decoding: bytes, as: UTF8.self) == expected)
            #expect(error == 0)
        }
    }

    @Test("Raw bytes go out exactly; thenClose false keeps the connection for the next request")
    func rawBytes() throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        let teAndLength = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nzz\r\nnot hex\r\n"
        server.route("/close", .raw(Data(teAndLength.utf8)))
        server.route("/keep", .raw(Data("HTTP/1.1 204 No Content\r\n\r\n".utf8), thenClose: false))

        let first = try WireClient(port: server.port)
        defer { first.close() }
        first.get("/close")
        let (bytes, error) = first.readToEnd()
        #expect(bytes == Array(teAndLength.utf8))
        #expect(error == 0)

        let second = try WireClient(port: server.port)
        defer { second.close() }
        second.get("/keep")
        #expect(second.readHead()?.text == "HTTP/1.1 204 No Content\r\n\r\n")
        second.get("/keep")
        #expect(second.readHead()?.text == "HTTP/1.1 204 No Content\r\n\r\n")
        #expect(server.acceptedConnectionCount == 2)
        #expect(server.requests(path: "/keep").map(\.connectionID) == [2, 2])
    }

    @Test("Raw-then-hold sends its bytes, then stays open and silent until the client leaves")
    func rawThenHold() throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route("/partial", .rawThenHold(Data("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc".utf8)))
        let client = try WireClient(port: server.port)
        client.get("/partial")
        #expect(client.readHead()?.header("Content-Length") == "10")
        #expect(client.read(exactly: 3) == Array("abc".utf8))
        #expect(!client.hasActivity(milliseconds: 300))
        client.close()
        #expect(eventually { server.clientHangUpCount == 1 })
    }

    @Test("A header flood has exactly the promised headers, then a body")
    func headerFlood() throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route("/flood", .headerFlood(count: 1000, valueLength: 40))
        let client = try WireClient(port: server.port)
        defer { client.close() }
        client.get("/flood")
        let head = try #require(client.readHead())
        let flood = head.headers.filter { $0.name.hasPrefix("X-Flood-") }
        #expect(flood.count == 1000)
        #expect(flood.map(\.name) == (1...1000).map { "X-Flood-\($0)" })
        #expect(flood.allSatisfy { $0.value == String(repeating: "a", count: 40) })
        #expect(head.header("Content-Length") == "2")
        #expect(client.read(exactly: 2) == Array("ok".utf8))
    }

    @Test("A challenge, then success, through a sequence that repeats its last step")
    func challengeSequence() throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route(
            "/private", .sequence([.challenge(body: Data("denied".utf8)), .ok(body: Data("welcome".utf8))]))
        server.route("/proxy", .challenge(scheme: "Basic realm=\"p\"", status: 407))
        let client = try WireClient(port: server.port)
        defer { client.close() }
        client.get("/private")
        let challenge = try #require(client.readHead())
        #expect(challenge.status == 401)
        #expect(challenge.header("WWW-Authenticate") == "Basic realm=\"x\"")
        #expect(client.read(exactly: 6) == Array("denied".utf8))
        for _ in 0..<2 {
            client.get("/private", headers: "Authorization: Basic dTpw\r\n")
            let head = try #require(client.readHead())
            #expect(head.status == 200)
            #expect(client.read(exactly: 7) == Array("welcome".utf8))
        }
        client.get("/proxy")
        let proxy = try #require(client.readHead())
        #expect(proxy.status == 407)
        #expect(proxy.header("Proxy-Authenticate") == "Basic realm=\"p\"")
        #expect(
            server.requests(path: "/private").map { $0.header("Authorization") } == [nil, "Basic dTpw", "Basic dTpw"])
    }

    @Test("Well-formed redirects and statuses, for mixing with the faults")
    func wellFormed() throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route("/moved", .redirect(status: 307, location: "/new"))
        server.route("/busy", .status(503, body: Data("later".utf8), headers: [("Retry-After", "1")]))
        let client = try WireClient(port: server.port)
        defer { client.close() }
        client.get("/moved")
        let redirect = try #require(client.readHead())
        #expect(redirect.text == "HTTP/1.1 307 Temporary Redirect\r\nLocation: /new\r\nContent-Length: 0\r\n\r\n")
        client.get("/busy")
        let busy = try #require(client.readHead())
        #expect(busy.status == 503)
        #expect(busy.header("Retry-After") == "1")
        #expect(client.read(exactly: 5) == Array("later".utf8))
    }

    // MARK: Resets and truncation

    @Test("Reset before headers: the client's read fails with ECONNRESET")
    func resetBeforeHeaders() throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route("/rst", .resetBeforeHeaders)
        let client = try WireClient(port: server.port)
        defer { client.close() }
        client.get("/rst")
        let (bytes, error) = client.readToEnd()
        #expect(bytes.isEmpty)
        #expect(error == ECONNRESET)
    }

    @Test("Reset mid-body: part of the declared body, then ECONNRESET")
    func resetMidBody() throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route("/rst", .resetMidBody(bodyLength: 1000))
        let client = try WireClient(port: server.port)
        defer { client.close() }
        client.get("/rst")
        let head = try #require(client.readHead())
        #expect(head.header("Content-Length") == "1000")
        let (body, error) = client.readToEnd()
        #expect(body.count <= 500)
        #expect(body.allSatisfy { $0 == UInt8(ascii: "x") })
        #expect(error == ECONNRESET)
    }

    @Test("A truncated body: fewer bytes than declared, then an orderly end of stream")
    func truncatedBody() throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route("/short", .truncatedBody(declared: 100, sent: 40))
        let client = try WireClient(port: server.port)
        defer { client.close() }
        client.get("/short")
        #expect(client.readHead()?.header("Content-Length") == "100")
        let (body, error) = client.readToEnd()
        #expect(body.count == 40)
        #expect(error == 0)
    }

    @Test("Filler bodies are streamed, never built whole: an Int.max body flows until the client leaves")
    func hugeFillerBodies() throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route("/short", .truncatedBody(declared: .max, sent: .max))
        server.route("/rst", .resetMidBody(bodyLength: .max))
        for (index, path) in ["/short", "/rst"].enumerated() {
            let client = try WireClient(port: server.port)
            client.get(path)
            let head = try #require(client.readHead())
            #expect(head.header("Content-Length") == "\(Int.max)")
            let (body, error) = client.readToEnd(limit: 2 << 20)
            #expect(error == -1)  // two MiB arrived and it was still going
            #expect(body.count == 2 << 20)
            #expect(body.allSatisfy { $0 == UInt8(ascii: "x") })
            client.close()
            #expect(eventually { server.clientHangUpCount == index + 1 })
        }
        #expect(eventually { threadNames(withPrefix: "\(server.threadNamePrefix)c").isEmpty })
    }

    @Test("Filler bodies: exact counts across the 64 KiB writes, and negative sizes send nothing")
    func fillerBodyEdges() throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        let odd = 3 * 64 * 1024 + 17
        server.route("/odd", .truncatedBody(declared: odd + 1, sent: odd))
        server.route("/whole", .truncatedBody(declared: 128 * 1024, sent: 128 * 1024))
        server.route("/negative", .truncatedBody(declared: -1, sent: -5))
        server.route("/rst-odd", .resetMidBody(bodyLength: 2 * odd))
        server.route("/rst-negative", .resetMidBody(bodyLength: -3))
        let cases: [(path: String, length: String, bodyCount: Int, error: Int32)] = [
            ("/odd", "\(odd + 1)", odd, 0), ("/whole", "\(128 * 1024)", 128 * 1024, 0), ("/negative", "-1", 0, 0),
            ("/rst-odd", "\(2 * odd)", odd, ECONNRESET), ("/rst-negative", "0", 0, ECONNRESET),
        ]
        for expected in cases {
            let client = try WireClient(port: server.port)
            defer { client.close() }
            client.get(expected.path)
            let head = try #require(client.readHead())
            #expect(head.header("Content-Length") == expected.length, "\(expected.path)")
            let (body, error) = client.readToEnd()
            #expect(error == expected.error, "\(expected.path)")
            #expect(body.allSatisfy { $0 == UInt8(ascii: "x") }, "\(expected.path)")
            if expected.error == 0 {
                #expect(body.count == expected.bodyCount, "\(expected.path)")
            } else {
                // A reset may discard bytes the client had not read yet; the server's count is exact.
                #expect(body.count <= expected.bodyCount, "\(expected.path)")
            }
            #expect(
                server.bytesSent(path: expected.path) == Int64(head.text.utf8.count + expected.bodyCount),
                "\(expected.path)")
        }
    }

    // MARK: URLs

    @Test("url(_:) always names this server, whatever the path holds")
    func urlStaysOnServer() throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        let base = "http://127.0.0.1:\(server.port)"
        #expect(server.url("/x.json").absoluteString == base + "/x.json")
        #expect(server.url("x.json").absoluteString == base + "/x.json")
        #expect(server.url("//evil.example/x").absoluteString == base + "/evil.example/x")
        #expect(server.url("http://evil.example/").absoluteString == base + "/http://evil.example/")
        #expect(server.url("a:b").absoluteString == base + "/a:b")
        for path in hostilePaths {
            let url = server.url(path)
            #expect(url.scheme == "http", "\(path) → \(url.absoluteString)")
            #expect(url.host == "127.0.0.1", "\(path) → \(url.absoluteString)")
            #expect(url.port == Int(server.port), "\(path) → \(url.absoluteString)")
        }
    }

    // MARK: Shutdown

    @Test(
        "Dropping the last reference shuts the server down: its threads end and its port closes", .enabled(if: isLinux))
    func releasedWhenDropped() throws {
        weak var dropped: HostileServer?
        var port: UInt16 = 0
        var prefix = ""
        var client: WireClient?
        do {
            let server = try HostileServer()
            dropped = server
            port = server.port
            prefix = server.threadNamePrefix
            server.route("/void", .acceptAndHang)
            let hanging = try WireClient(port: server.port)
            client = hanging
            hanging.get("/void")
            #expect(eventually { server.receivedRequests.count == 1 })
            #expect(eventually { threadNames(withPrefix: prefix).count == 2 }, "accept + the hanging connection")
        }
        defer { client?.close() }
        #expect(dropped == nil, "the server's threads must not keep it alive")
        #expect(eventually { threadNames(withPrefix: prefix).isEmpty })
        #expect(eventually { openSocketInodes(port: port).isEmpty })
        // The hanging connection was closed by the server, not left open.
        #expect(client?.readToEnd().error == 0)
    }

    @Test("shutdown() ends every behaviour and leaves no server thread; it is not counted as a hang-up")
    func shutdownLeavesNoThreads() throws {
        let server = try HostileServer()
        server.route("/feed", .endlessBody(chunked: false))
        server.route("/void", .acceptAndHang)
        server.route("/slow", .dripHeaders(interval: 10))
        let clients = try (0..<3).map { _ in try WireClient(port: server.port) }
        defer { clients.forEach { $0.close() } }
        for (client, path) in zip(clients, ["/feed", "/void", "/slow"]) { client.get(path) }
        #expect(eventually { server.receivedRequests.count == 3 })
        // Wait until the endless body is blocked on the unread socket (sent bytes stop growing).
        #expect(
            eventually {
                let before = server.bytesSent(path: "/feed")
                Thread.sleep(forTimeInterval: 0.05)
                return before > 64 << 10 && server.bytesSent(path: "/feed") == before
            })
        #expect(!threadNames(withPrefix: server.threadNamePrefix).isEmpty)
        // `shutdown()` waits at most 10 s for the threads, so its duration proves nothing (a
        // bound on it could not fail); that every thread is gone afterwards does. A header drip
        // of 10 s per line and an endless body never end by themselves.
        server.shutdown()
        // A thread signals it is done just before it exits; give the kernel a moment to reap it.
        #expect(eventually { threadNames(withPrefix: server.threadNamePrefix).isEmpty })
        #expect(threadNames(withPrefix: server.threadNamePrefix) == [])
        #expect(server.clientHangUpCount == 0)
        server.shutdown()  // a second call is harmless
    }
}
