import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Runs `command` with `/bin/sh` (dash on Debian: POSIX only) as a script file, as a terminal
/// would run a pasted line (with `sh -c`, the whole command is one argument, and no argument may
/// exceed 128 KiB on Linux); its exit status and output.
func runInShell(_ command: String) throws -> (status: Int32, output: String) {
    let script = FileManager.default.temporaryDirectory.appendingPathComponent("curl-command-\(UUID().uuidString).sh")
    try Data((command + "\n").utf8).write(to: script)
    defer { try? FileManager.default.removeItem(at: script) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = [script.path]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try ProcessLauncher.run(process)
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

@Suite("CurlCommand: a curl command line for any request, redacted by default", .serialized)
struct CurlCommandTests {
    static func request(
        _ url: String, method: String = "GET", headers: [String: String] = [:], body: Data? = nil
    )
        throws -> URLRequest
    {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body
        return request
    }

    @Test(
        "Credentials are redacted by default: auth headers keep their scheme, cookies, API keys, query secrets, user info, JSON fields"
    )
    func redactedByDefault() throws {
        let request = try Self.request(
            "https://alice:hunter22@api.example.com/v1/items?page=2&api_key=k-123456&q=shoes",
            method: "POST",
            headers: [
                "Authorization": "Bearer tok-abcdef", "Cookie": "sid=s-987654", "X-Api-Key": "key-555555",
                "X-Session": "own-header-secret", "Content-Type": "application/json", "Accept": "application/json",
            ],
            // The token echoed under a field that does not look secret is scrubbed by value.
            body: Data(#"{"name":"Ada","password":"pw-424242","note":"tok-abcdef"}"#.utf8))
        let command = CurlCommand(request, alsoRedacting: ["x-session"])
        let text = command.description
        for secret in [
            "hunter22", "alice", "k-123456", "tok-abcdef", "s-987654", "key-555555", "own-header-secret", "pw-424242",
        ] {
            #expect(!text.contains(secret), "\(secret) leaked: \(text)")
        }
        #expect(text.contains("'Authorization: Bearer <redacted>'"))
        #expect(text.contains("q=shoes") && text.contains("page=2"))
        #expect(text.contains(#""name":"Ada""#))
        #expect(text.hasPrefix("curl -X POST -H 'Accept: application/json' -H 'Authorization: Bearer <redacted>'"))
        #expect(request.curlCommand() == CurlCommand(request).description)

        let revealed = request.curlCommand(secrets: .includeSecretsInPlainText)
        for secret in [
            "hunter22", "k-123456", "tok-abcdef", "s-987654", "key-555555", "own-header-secret", "pw-424242",
        ] {
            #expect(revealed.contains(secret), "\(secret) missing with secrets included")
        }
    }

    @Test("Shapes: GET has no -X, HEAD is --head, an empty header is sent empty, a body without a type gets none")
    func shapes() throws {
        #expect(
            CurlCommand(try Self.request("http://h.example/a")).arguments == [
                "--globoff", "--url", "http://h.example/a",
            ])
        #expect(CurlCommand(try Self.request("http://h.example/a", method: "HEAD")).arguments.first == "--head")
        #expect(
            CurlCommand(try Self.request("http://h.example/a", method: "DELETE")).arguments
                == ["-X", "DELETE", "--globoff", "--url", "http://h.example/a"])
        var empty = try Self.request("http://h.example/a")
        empty.setValue("", forHTTPHeaderField: "X-Empty")
        #expect(CurlCommand(empty).arguments.contains("X-Empty;"))
        let untyped = CurlCommand(try Self.request("http://h.example/a", method: "PUT", body: Data("x=1".utf8)))
        #expect(
            untyped.arguments == [
                "-X", "PUT", "-H", "Content-Type:", "--data-raw", "x=1", "--globoff", "--url", "http://h.example/a",
            ])
        var streamed = try Self.request("http://h.example/a", method: "POST")
        streamed.httpBodyStream = InputStream(data: Data("abc".utf8))
        #expect(CurlCommand(streamed).description.hasSuffix("# the body is a stream and is not shown"))
        let large = CurlCommand(
            try Self.request("http://h.example/a", method: "POST", body: Data(count: CurlCommand.maxShownBodyBytes + 1))
        )
        #expect(large.description.hasSuffix("# the body (1048577 bytes) is not shown"))
        #expect(!large.arguments.contains("--data-raw") && !large.arguments.contains("--data-binary"))
    }

    @Test("Quoting: quotes, $(…), backticks and control characters in a value can never run a command")
    func hostileQuoting() throws {
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("curl-pwned-\(UUID().uuidString)")
        let payloads = [
            "a'; touch \(marker.path); echo '", "$(touch \(marker.path))", "`touch \(marker.path)`",
            "x\ttab\u{1}", "\"; touch \(marker.path); \"", "\\'\\''", "é ü 😀",
            // A combining mark after the quote: Foundation's default search treats `'` + U+0301
            // as one character and replaced nothing, closing the quote for the shell.
            "a'\u{301}; touch \(marker.path); #", "x\t'\u{301}!y",
        ]
        for payload in payloads {
            let quoted = CurlCommand.quoted(payload)
            let (status, output) = try runInShell("printf '%s' " + quoted)
            #expect(status == 0)
            #expect(output == payload, "\(quoted)")
            #expect(!quoted.contains("\t") && !quoted.contains("\u{1}"), "no raw control character: \(quoted)")
        }
        #expect(!FileManager.default.fileExists(atPath: marker.path))
        #expect(CurlCommand.quoted("plain-value_1.2") == "plain-value_1.2")
        #expect(CurlCommand.quoted("") == "''")
    }

    /// The request the server saw, for comparing two requests: method, target, the headers the
    /// request set (names without case) and the body.
    struct Seen: Equatable {
        let method: String
        let target: String
        let headers: [String: String]
        let body: Data

        init(_ request: LoopbackRequest, headers names: [String]) {
            method = request.method
            target = request.target
            let wanted = Set(names.map { $0.lowercased() })
            var headers: [String: String] = [:]
            for header in request.headers where wanted.contains(header.name.lowercased()) {
                headers[header.name.lowercased()] = header.value
            }
            self.headers = headers
            body = request.body
        }
    }

    @Test(
        "As printed, in /bin/sh, it sends the request the transport sent: method, target, headers and body, byte for byte",
        arguments: TransportKind.all)
    func reproducesTheRequest(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("POST", "/items") { _ in LoopbackResponse(status: 201, body: Data("{}".utf8)) }
        server.route("PUT", "/blob") { _ in LoopbackResponse(status: 204, body: Data()) }
        server.route("GET", "/search") { _ in LoopbackResponse(status: 200, body: Data("[]".utf8)) }
        let transport = try kind.make()
        let requests = [
            try Self.request(
                server.url("/items").absoluteString + "?tag=a%20b&sort=-date", method: "POST",
                headers: [
                    "Authorization": "Bearer tok-it's-\"quoted\"", "Content-Type": "application/json; charset=utf-8",
                    "X-Note": "it's $(not) `run`", "X-Tab": "a\tb",
                ],
                body: Data("{\"text\":\"line one\\nline two\",\"quote\":\"'\",\"emoji\":\"😀\"}\n".utf8)),
            try Self.request(
                server.url("/blob").absoluteString, method: "PUT",
                headers: ["Content-Type": "application/octet-stream"],
                body: Data([0, 1, 2, 0x27, 0x5C, 0x0A, 0x0D, 0x7F, 0x80, 0xC3, 0xFF, 0x25, 0x62])),
            try Self.request(server.url("/search").absoluteString + "?q=%5Bx%5D&n={1}", headers: ["Accept": "*/*"]),
            // No Content-Type: curl must not add its form type.
            try Self.request(server.url("/items").absoluteString, method: "POST", body: Data("plain=1&b=2".utf8)),
            // A text body that starts with "@": sent as it is, never read as the name of a
            // local file (which `--data-binary @/etc/hostname` would upload).
            try Self.request(
                server.url("/items").absoluteString, method: "POST", headers: ["Content-Type": "text/plain"],
                body: Data("@/etc/hostname".utf8)),
        ]
        for request in requests {
            server.clearRecordedRequests()
            _ = try await transport.data(for: request)
            let command = CurlCommand(request, secrets: .includeSecretsInPlainText)
            let (status, output) = try runInShell(command.description + " --silent --show-error --output /dev/null")
            #expect(status == 0, "\(command): \(output)")
            let seen = server.receivedRequests
            #expect(seen.count == 2, "\(command)")
            guard seen.count == 2 else { continue }
            let names = Array((request.allHTTPHeaderFields ?? [:]).keys) + ["Content-Length", "Content-Type"]
            if kind == .urlSession, request.value(forHTTPHeaderField: "Content-Type") == nil, request.httpBody != nil {
                // URLSession adds a form type to a body without one; curl, like CurlTransport, sends none.
                #expect(seen[0].headers.contains { $0.name.lowercased() == "content-type" })
                #expect(!seen[1].headers.contains { $0.name.lowercased() == "content-type" })
                continue
            }
            #expect(Seen(seen[1], headers: names) == Seen(seen[0], headers: names), "\(command)")
        }
    }

    @Test("A header name no transport sends (`@name`, which `curl -H` reads as a file) is left out, with a note")
    func invalidHeaderNameLeftOut() throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/a") { _ in LoopbackResponse(status: 204) }
        // `curl -H '@123456: v'` reads header lines from the file `123456: v`, here in the
        // directory the command runs in.
        let name = String(UInt32.random(in: 100_000...999_999))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curl-at-\(name)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("X-From-Local-File: private-content\n".utf8).write(to: directory.appendingPathComponent(name + ": v"))
        var request = URLRequest(url: server.url("/a"))
        request.setValue("v", forHTTPHeaderField: "@" + name)
        request.setValue("kept", forHTTPHeaderField: "X-Kept")
        let command = CurlCommand(request, secrets: .includeSecretsInPlainText)
        #expect(!command.description.contains("@" + name), "\(command)")
        #expect(command.note?.contains("1 header field(s) left out") == true, "\(command)")
        let (status, output) = try runInShell(
            "cd '\(directory.path)' && " + command.description + " --silent --show-error --output /dev/null")
        #expect(status == 0, "\(command): \(output)")
        let seen = try #require(server.receivedRequests.first)
        #expect(!seen.headers.contains { $0.name == "X-From-Local-File" }, "\(seen.headers)")
        #expect(seen.header("X-Kept") == "kept")
    }

    @Test("A HEAD with a body runs as printed (-X HEAD: curl refuses --head with a body)")
    func headWithBody() throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("HEAD", "/h") { _ in LoopbackResponse(status: 204) }
        let request = try Self.request(server.url("/h").absoluteString, method: "HEAD", body: Data("a=1".utf8))
        let command = CurlCommand(request, secrets: .includeSecretsInPlainText)
        let (status, output) = try runInShell(command.description + " --silent --show-error --output /dev/null")
        #expect(status == 0, "\(command): \(output)")
        #expect(server.receivedRequests.map(\.method) == ["HEAD"])
        #expect(server.receivedRequests.first?.body == Data("a=1".utf8))
    }

    @Test("The redacted command runs too, sending the placeholder, and the server never sees the secret")
    func redactedRuns() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("POST", "/login") { _ in LoopbackResponse(status: 200, body: Data("{}".utf8)) }
        let request = try Self.request(
            server.url("/login").absoluteString, method: "POST",
            headers: ["Authorization": "Bearer tok-secret-1", "Content-Type": "application/json"],
            body: Data(#"{"user":"ada","password":"pw-secret-2"}"#.utf8))
        let (status, output) = try runInShell(CurlCommand(request).description + " --silent --show-error -o /dev/null")
        #expect(status == 0, "\(output)")
        let seen = try #require(server.receivedRequests.first)
        #expect(seen.headers.contains { $0.name == "Authorization" && $0.value == "Bearer <redacted>" })
        let body = String(decoding: seen.body, as: UTF8.self)
        #expect(body.contains("ada") && !body.contains("pw-secret-2"), "\(body)")
    }
}
