import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Leaks and breakages in what observers print, found by review. Each test failed before its fix.
@Suite(
    "Observers: no secret in a cURL command or a record, a command that runs as printed, a HAR file always written",
    .serialized)
struct ObservabilityLeakTests {
    private static func post(_ url: String, body: Data, contentType: String? = nil) throws -> URLRequest {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = "POST"
        request.httpBody = body
        if let contentType { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        return request
    }

    /// The records of `request` answered with `headers` and `body`, as text.
    private static func logged(
        _ request: URLRequest, headers: [String: String] = [:], body: Data, alsoHeaders: [String] = []
    ) throws -> String {
        let logger = RecordingLogger()
        let session = try #require(NetworkLogSession(logger: logger, request: request, alsoHeaders: alsoHeaders))
        let url = try #require(request.url)
        let response = try #require(
            HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: headers))
        session.response(response, body: body)
        return logger.records.map { record in
            "\(record.description)|\(record.url)|\(record.headers.sorted { $0.key < $1.key })|\(record.bodyExcerpt ?? "")"
        }.joined(separator: "\n")
    }

    @Test("cURL: a JSON body is redacted by its fields whatever its Content-Type says")
    func jsonWithoutType() throws {
        for type in [nil, "text/plain", "application/octet-stream"] {
            let request = try Self.post(
                "https://api.example.com/login", body: Data(#"{"user":"ada","password":"pw-SEKRIT-1"}"#.utf8),
                contentType: type)
            let text = CurlCommand(request).description
            #expect(!text.contains("SEKRIT"), "\(text)")
            #expect(text.contains("ada"))
        }
    }

    @Test("cURL: a body too large to redact is left out when redacting, shown with .includeSecretsInPlainText")
    func largeBody() throws {
        let filler = String(repeating: "x", count: 70_000)
        let request = try Self.post(
            "https://api.example.com/upload", body: Data(#"{"password":"pw-SEKRIT-2","data":"\#(filler)"}"#.utf8),
            contentType: "application/json")
        let redacted = CurlCommand(request)
        #expect(!redacted.description.contains("SEKRIT"))
        #expect(redacted.note?.contains("too large to redact") == true)
        #expect(CurlCommand(request, secrets: .includeSecretsInPlainText).description.contains("SEKRIT"))
    }

    @Test("cURL: a form body that is not UTF-8 is redacted byte for byte; its other bytes go out as they were")
    func nonUTF8Form() throws {
        let body = Data("user=Jos".utf8) + Data([0xE9]) + Data("&password=pw-SEKRIT-12&echo=tok-SEKRIT-12".utf8)
        var request = try Self.post(
            "https://api.example.com/form", body: body, contentType: "application/x-www-form-urlencoded")
        request.setValue("Bearer tok-SEKRIT-12", forHTTPHeaderField: "Authorization")
        let command = CurlCommand(request)
        #expect(!command.description.contains("SEKRIT"), "\(command.description)")
        let piped = try #require(command.standardInput)
        #expect(piped.starts(with: Data("user=Jos".utf8) + Data([0xE9])))
    }

    @Test("cURL: the URL goes after --url, so a URL text starting with '-' is not an option")
    func urlNotAnOption() throws {
        let request = URLRequest(url: try #require(URL(string: "-o/tmp/gentle-pwned")))
        let command = CurlCommand(request, secrets: .includeSecretsInPlainText)
        let arguments = command.arguments
        let index = try #require(arguments.firstIndex(of: "-o/tmp/gentle-pwned"))
        #expect(index > 0 && arguments[index - 1] == "--url")
    }

    @Test("cURL: an argument starting with '=' is quoted (zsh expands =word), and reaches curl as it is")
    func equalsQuoted() throws {
        #expect(CurlCommand.quoted("=ls") == "'=ls'")
        #expect(CurlCommand.quoted("a=b") == "a=b")
        let request = try Self.post("http://127.0.0.1:9/x", body: Data("=ls".utf8), contentType: "text/plain")
        #expect(CurlCommand(request).description.contains("--data-raw '=ls'"))
    }

    @Test("Records: the password of a URL's user info is scrubbed wherever the server echoes it")
    func userInfoPassword() throws {
        let request = URLRequest(url: try #require(URL(string: "https://bob:pw-SEKRIT-4@api.example.com/x")))
        let text = try Self.logged(
            request, headers: ["X-Debug": "rejected pw-SEKRIT-4"],
            body: Data(#"{"error":"bad password pw-SEKRIT-4"}"#.utf8))
        #expect(!text.contains("SEKRIT"), "\(text)")
    }

    @Test(
        "cURL: JSON that does not parse (NDJSON, a trailing comma, a Latin-1 byte) still has its secret fields redacted"
    )
    func unparsableJSON() throws {
        let bodies: [(String, Data)] = [
            ("ndjson", Data("{\"user\":\"ada\",\"password\":\"pw-SEKRIT-8\"}\n{\"user\":\"bob\"}\n".utf8)),
            ("trailing comma", Data(#"{"user":"ada","password":"pw-SEKRIT-8",}"#.utf8)),
            ("latin-1", Data(#"{"user":"Jos"#.utf8) + Data([0xE9]) + Data(#"","password":"pw-SEKRIT-8"}"#.utf8)),
        ]
        for (name, body) in bodies {
            let request = try Self.post("http://127.0.0.1:9/x", body: body, contentType: "application/x-ndjson")
            let command = CurlCommand(request)
            let shown = command.description + String(decoding: command.standardInput ?? Data(), as: UTF8.self)
            #expect(!shown.contains("SEKRIT"), "\(name): \(shown)")
            #expect(shown.contains("ada") || shown.contains("Jos"), "\(name): the rest is kept: \(shown)")
        }
    }

    @Test("cURL: the caller's Content-Length is left out (curl counts what it sends); the redacted command runs")
    func contentLengthLeftOut() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("POST", "/login") { _ in .status(204) }
        let body = Data(#"{"user": "ada", "password": "pw-1"}"#.utf8)
        var request = try Self.post(server.url("/login").absoluteString, body: body, contentType: "application/json")
        request.setValue("\(body.count)", forHTTPHeaderField: "Content-Length")
        let command = CurlCommand(request)
        #expect(!command.arguments.contains { $0.lowercased().hasPrefix("content-length") }, "\(command.arguments)")
        let (status, output) = try runInShell(command.description + " --silent --show-error -o /dev/null")
        #expect(status == 0, "\(output)")
        let seen = try #require(server.receivedRequests.first)
        #expect(seen.header("Content-Length") == "\(seen.body.count)")
        #expect(String(decoding: seen.body, as: UTF8.self).contains("<redacted>"))
        #expect(server.receivedRequests.count == 1, "the rest of the body was not read as another request")
    }

    @Test("cURL: a 200 KiB text body and a header of blanks run as printed; the server gets both as sent")
    func largeTextBodyRuns() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("POST", "/upload") { _ in .status(204) }
        let text = "{\"items\":[" + (0..<12_000).map { "\"item-\($0)\"" }.joined(separator: ",") + "]}"
        let body = Data(text.utf8)
        #expect(body.count > 128 * 1024)
        var request = try Self.post(server.url("/upload").absoluteString, body: body, contentType: "application/json")
        request.setValue("  ", forHTTPHeaderField: "X-Blank")
        let command = CurlCommand(request, secrets: .includeSecretsInPlainText)
        // Before: `--data-raw` with 200 KiB, which Linux refuses to start ("Argument list too long").
        let (status, output) = try runInShell(command.description + " --silent --show-error -o /dev/null")
        #expect(status == 0, "\(output.prefix(500))")
        let seen = try #require(server.receivedRequests.first)
        #expect(seen.body == body)
        #expect(seen.headers.contains { $0.name.lowercased() == "x-blank" }, "\(seen.headers)")
        // A small body with the header of blanks. Before: `-H 'X-Blank:   '`, which curl reads
        // as "remove X-Blank".
        var small = try Self.post(server.url("/upload").absoluteString, body: Data("{}".utf8))
        small.setValue("  ", forHTTPHeaderField: "X-Blank")
        let smallCommand = CurlCommand(small)
        #expect(try runInShell(smallCommand.description + " --silent --show-error -o /dev/null").status == 0)
        let smallSeen = try #require(server.receivedRequests.last)
        #expect(smallSeen.headers.contains { $0.name.lowercased() == "x-blank" }, "\(smallSeen.headers)")
    }

    @Test("Records: a URL's user name and the Basic credential made of it are scrubbed where a server echoes them")
    func userInfoUserAndBasic() throws {
        let request = URLRequest(url: try #require(URL(string: "https://bob:pw-SEKRIT-4@api.example.com/x")))
        let text = try Self.logged(request, body: Data("got Basic Ym9iOnB3LVNFS1JJVC00".utf8))
        #expect(!text.contains("Ym9iOnB3LVNFS1JJVC00"), "\(text)")
        let token = URLRequest(url: try #require(URL(string: "https://sk_live_SEKRIT5:@api.example.com/x")))
        let echoed = try Self.logged(token, body: Data("invalid key sk_live_SEKRIT5".utf8))
        #expect(!echoed.contains("SEKRIT5"), "\(echoed)")
    }

    @Test("Records: sig (Azure SAS), code_verifier and client_assertion are secrets; a Link header's URL is redacted")
    func moreCredentialNames() throws {
        for name in ["sig", "SIG", "code_verifier", "client_assertion", "assertion"] {
            #expect(Redactor.isSensitiveName(name), "\(name)")
        }
        for name in ["signal", "design", "code", "assert"] {
            #expect(!Redactor.isSensitiveName(name), "\(name)")
        }
        let request = URLRequest(
            url: try #require(URL(string: "https://acct.blob.core.windows.net/c/b?sv=2024&sp=r&sig=SEKRIT-SAS")))
        let text = try Self.logged(
            request, headers: ["Link": "<https://h.example/next?session=SEKRIT-LINK>; rel=next"], body: Data())
        #expect(!text.contains("SEKRIT"), "\(text)")
    }

    @Test("Records and cURL: Google's ?key=, Cloudflare's X-Auth-Key, a private_key and a pwd field are secrets")
    func keyNames() throws {
        var request = try Self.post(
            "https://maps.example.com/geo?key=AIzaSEKRIT1&q=x",
            body: Data(#"{"private_key":"SEKRIT2","pwd":"SEKRIT3"}"#.utf8),
            contentType: "application/json")
        request.setValue("SEKRIT4", forHTTPHeaderField: "X-Auth-Key")
        request.setValue("SEKRIT5", forHTTPHeaderField: "Ocp-Apim-Subscription-Key")
        let text = try Self.logged(
            request, body: Data(#"{"echo":{"access_key":"SEKRIT6","jwt":"SEKRIT7","pass":"SEKRIT8"}}"#.utf8))
        #expect(!text.contains("SEKRIT"), "\(text)")
        let command = CurlCommand(request).description
        #expect(!command.contains("SEKRIT"), "\(command)")
        // The auth service's own header, through the URLRequest convenience too.
        var custom = URLRequest(url: try #require(URL(string: "https://api.example.com/me")))
        custom.setValue("SEKRIT9", forHTTPHeaderField: "X-Access")
        #expect(!custom.curlCommand(alsoRedacting: ["X-Access"]).contains("SEKRIT9"))
    }

    @Test("Records and cURL: a header named as a credential (an auth service's own) is redacted however short")
    func shortValueOfNamedHeader() throws {
        var request = URLRequest(url: try #require(URL(string: "https://api.example.com/v1")))
        request.setValue("k9Z", forHTTPHeaderField: "X-Own")
        // Too short to scrub by value (under 4 bytes): only the name can hide it.
        let text = try Self.logged(request, headers: ["X-Own": "k9Z"], body: Data(), alsoHeaders: ["x-own"])
        #expect(!text.contains("k9Z"), "\(text)")
        #expect(text.contains("X-Own"), "\(text)")
        let command = CurlCommand(request, alsoRedacting: ["X-OWN"]).description
        #expect(!command.contains("k9Z"), "\(command)")
        #expect(command.contains("'X-Own: <redacted>'"), "\(command)")
    }

    @Test("Records and cURL: a pre-signed URL in a JSON string and JSON inside a JSON string lose their secrets")
    func secretsInsideJSONStrings() throws {
        let inner = #"{"access_token":"SEKRIT3","nested":"{\"password\":\"SEKRIT4\"}"}"#
        let object: [String: Any] = [
            "upload_url": "https://bucket.s3.example.com/k?X-Amz-Signature=SEKRIT1&X-Amz-Credential=SEKRIT2&part=1",
            "body": inner, "note": "Why? Because a=b & c=d", "plain": "https://h.example/page?page=2",
        ]
        let body = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        let request = try Self.post("https://api.example.com/files", body: body, contentType: "application/json")
        let text = try Self.logged(request, body: body)
        // Before: the signature, the credential and the gateway's token were shown as sent.
        #expect(!text.contains("SEKRIT"), "\(text)")
        // Ordinary text and URLs without secrets are left as they are.
        #expect(text.contains("Why? Because a=b & c=d"), "\(text)")
        #expect(text.contains("page=2"), "\(text)")
        #expect(!CurlCommand(request).description.contains("SEKRIT"))
        // Without a secret, strings are sent as they are: a URL keeps its fragment, and JSON in
        // a string keeps its key order and number forms (a webhook's signature covers them).
        let innocent = Data(#"{"link":"https://docs.example/a#b","payload":"{\"b\":1.50,\"a\":2}"}"#.utf8)
        let plain = try Self.post("https://api.example.com/hooks", body: innocent, contentType: "application/json")
        let command = CurlCommand(plain)
        let shownBody = command.arguments.last { $0.hasPrefix("{") } ?? ""
        // Before: re-serialized (`https:\/\/docs.example\/a`, the fragment gone, the payload's
        // keys sorted and 1.50 written 1.5).
        #expect(shownBody == String(decoding: innocent, as: UTF8.self), "\(shownBody)")
    }

    @Test(
        "Records: a token refreshed on the way is scrubbed where the server echoes it; a refresh's URL error loses its secret",
        arguments: TransportKind.all)
    func refreshedTokenScrubbed(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/me") { request in
            if request.header("Authorization") == "Bearer NEWSEKRIT-TOKEN" {
                return .json(#"{"msg":"token NEWSEKRIT-TOKEN ok"}"#)
            }
            return .json(#"{"error":"expired"}"#, status: 401)
        }
        let logger = RecordingLogger()
        let auth = InMemoryAuthService(token: "OLDSEKRIT-TOKEN")
        let reauth = ReauthTransport(inner: try kind.make(), authService: auth) {
            try await auth.keyChainStore.save("NEWSEKRIT-TOKEN", forKey: "accessToken")
        }
        let service = HTTPNetworkService(transport: reauth, authService: auth, logger: logger)
        let endpoint = Endpoint(path: "/me", method: .get, requiresAuth: true)
        try await service.requestVoid(to: endpoint, via: DefaultAPIEnvironment(baseURL: server.baseURL))
        let response = try #require(logger.records.first { $0.event == .response })
        // Before: the response record quoted the refreshed token (only the first was scrubbed).
        #expect(response.bodyExcerpt?.contains("NEWSEKRIT") == false, "\(response.bodyExcerpt ?? "nil")")
        #expect(response.bodyExcerpt?.contains("<redacted>") == true)

        // A refresh that fails with a URL error quoting its URL: the failure record does not show
        // the secret query value (no value of the request itself).
        struct RefreshURLFailure: Error, CustomStringConvertible {
            var description: String {
                "Error Domain=NSURLErrorDomain Code=-1004 NSErrorFailingURLStringKey=https://auth.example.com/token?grant_type=x&client_secret=SEKRIT-CLIENT, next"
            }
        }
        let failingLogger = RecordingLogger()
        let failing = HTTPNetworkService(
            transport: ReauthTransport(inner: try kind.make(), authService: InMemoryAuthService(token: "t0")) {
                throw RefreshURLFailure()
            }, authService: InMemoryAuthService(token: "t0"), logger: failingLogger)
        server.route("GET", "/denied") { _ in .json(#"{"error":"expired"}"#, status: 401) }
        await #expect(throws: NetworkError.self) {
            try await failing.requestVoid(
                to: Endpoint(path: "/denied", method: .get, requiresAuth: true),
                via: DefaultAPIEnvironment(baseURL: server.baseURL))
        }
        let failure = try #require(failingLogger.records.first { $0.event == .failure })
        let shown = failure.errorDescription ?? ""
        #expect(!shown.contains("SEKRIT-CLIENT"), "\(shown)")
        #expect(shown.contains("auth.example.com/token"), "\(shown)")
    }

    struct Profile: Decodable { let name: Int }

    @Test(
        "Errors: a token refreshed on the way is scrubbed from a status error and a decoding error, with no logger",
        arguments: TransportKind.all)
    func refreshedTokenNotInErrors(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        for path in ["/forbidden", "/garbled"] {
            server.route("GET", path) { request in
                guard request.header("Authorization") == "Bearer NEWSEKRIT-TOKEN" else {
                    return .json(#"{"error":"expired"}"#, status: 401)
                }
                return path == "/forbidden"
                    ? .json(#"{"msg":"token NEWSEKRIT-TOKEN lacks scope"}"#, status: 403)
                    : .json(#"{"name":"NEWSEKRIT-TOKEN"}"#)
            }
        }
        for deferred in [true, false] {
            let auth = InMemoryAuthService(token: "OLDSEKRIT-TOKEN")
            let reauth = ReauthTransport(inner: try kind.make(), authService: auth) {
                try await auth.keyChainStore.save("NEWSEKRIT-TOKEN", forKey: "accessToken")
            }
            // `PinningTransport`-free, logger-free: the deferred fast path, or (wrapped in a
            // plain transport) the full one.
            let transport: any HTTPTransportProtocol = deferred ? reauth : PlainTransport(inner: reauth)
            let service = HTTPNetworkService(transport: transport, authService: auth)
            let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
            var texts: [String] = []
            do {
                try await service.requestVoid(
                    to: Endpoint(path: "/forbidden", method: .get, requiresAuth: true), via: environment)
            } catch {
                texts += [
                    String(describing: error), String(reflecting: error), (error as? NetworkError)?.message ?? "",
                ]
            }
            try await auth.keyChainStore.save("OLDSEKRIT-TOKEN", forKey: "accessToken")
            do {
                let _: Profile = try await service.request(
                    to: Endpoint(path: "/garbled", method: .get, requiresAuth: true), via: environment)
            } catch {
                texts += [
                    String(describing: error), String(reflecting: error), (error as? NetworkError)?.message ?? "",
                ]
            }
            #expect(texts.count == 6, "\(texts)")
            // Before: the 403's excerpt and the decoding error quoted the refreshed token.
            #expect(!texts.contains { $0.contains("NEWSEKRIT") }, "deferred \(deferred): \(texts)")
        }
    }

    enum Role: String, Decodable { case admin, member }
    struct Member: Decodable { let role: Role }

    @Test(
        "Errors: a streamed 403 echoing a refreshed token, and a decoder's own error quoting a token or 1 MB value",
        arguments: TransportKind.all)
    func streamAndDecoderErrors(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/stream") { request in
            guard request.header("Authorization") == "Bearer NEWSEKRIT-TOKEN" else {
                return .json(#"{"error":"expired"}"#, status: 401)
            }
            return .json(#"{"msg":"token NEWSEKRIT-TOKEN lacks scope"}"#, status: 403)
        }
        server.route("GET", "/role") { request in
            .json(#"{"role":"\#(request.header("Authorization") ?? "")"}"#)
        }
        server.route("GET", "/huge-role") { _ in .json(#"{"role":""# + String(repeating: "r", count: 1 << 20) + #""}"#)
        }
        let auth = InMemoryAuthService(token: "OLDSEKRIT-TOKEN")
        let reauth = ReauthTransport(inner: try kind.make(), authService: auth) {
            try await auth.keyChainStore.save("NEWSEKRIT-TOKEN", forKey: "accessToken")
        }
        let service = HTTPNetworkService(transport: reauth, authService: auth)
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
        func texts(_ error: any Error) -> [String] {
            let underlying = (error as? NetworkError)?.underlyingError
            return [
                String(describing: error), String(reflecting: error), (error as? NetworkError)?.message ?? "",
                underlying.map { String(describing: $0) } ?? "", underlying.map { String(reflecting: $0) } ?? "",
            ]
        }
        var shown: [String] = []
        do {
            _ = try await service.stream(
                to: Endpoint(path: "/stream", method: .get, requiresAuth: true), via: environment)
            Issue.record("the 403 did not throw")
        } catch {
            shown += texts(error)
        }
        do {
            let _: Member = try await service.request(
                to: Endpoint(path: "/role", method: .get, requiresAuth: true), via: environment)
            Issue.record("the role decoded")
        } catch {
            shown += texts(error)
        }
        #expect(!shown.contains { $0.contains("SEKRIT") }, "\(shown)")
        do {
            let _: Member = try await service.request(to: Endpoint(path: "/huge-role", method: .get), via: environment)
            Issue.record("the role decoded")
        } catch {
            let longest = texts(error).map(\.utf8.count).max() ?? 0
            #expect(longest < 16_384, "an error text of \(longest) bytes")
            #expect((error as? NetworkError)?.underlyingError is DecodingError, "its case and path are kept")
        }
    }

    @Test(
        "Errors: a JSON Lines line echoing a token a refresh put on the retried stream is not quoted",
        arguments: TransportKind.all)
    func jsonLinesRefreshedToken(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/rows") { request in
            let credential = request.header("Authorization") ?? ""
            guard credential == "Bearer NEWSEKRIT-TOKEN" else { return .json(#"{"error":"expired"}"#, status: 401) }
            return LoopbackResponse(
                status: 200, body: Data("{\"role\":\"member\"}\n{\"role\":\"\(credential)\"}\n".utf8))
        }
        let auth = InMemoryAuthService(token: "OLDSEKRIT-TOKEN")
        let reauth = ReauthTransport(inner: try kind.make(), authService: auth) {
            try await auth.keyChainStore.save("NEWSEKRIT-TOKEN", forKey: "accessToken")
        }
        let service = HTTPNetworkService(transport: reauth, authService: auth)
        var roles: [Role] = []
        var failure: (any Error)?
        do {
            let lines = try await service.jsonLines(
                of: Member.self, to: Endpoint(path: "/rows", method: .get, requiresAuth: true),
                via: DefaultAPIEnvironment(baseURL: server.baseURL))
            for try await member in lines { roles.append(member.role) }
        } catch {
            failure = error
        }
        #expect(roles == [.member])
        let error = try #require(failure)
        guard case StreamingError.undecodableLine(2, let message) = error else {
            Issue.record("expected line 2 undecodable, got \(error)")
            return
        }
        // Before: the message quoted the refreshed token (only the first request's was scrubbed).
        #expect(message.contains("role") && !message.contains("SEKRIT"), "\(message)")
        #expect(!String(describing: error).contains("SEKRIT") && !String(reflecting: error).contains("SEKRIT"))
        #expect(
            server.requests(path: "/rows").map { $0.header("Authorization") } == [
                "Bearer OLDSEKRIT-TOKEN", "Bearer NEWSEKRIT-TOKEN",
            ])
    }

    @Test("Records: JSON too large to parse is not also read as a form; a user name beside a password stays")
    func noFormOnJSONAndPlainUser() throws {
        let request = URLRequest(
            url: try #require(URL(string: "https://admin:pw-SEKRIT-9@api.example.com/admin/status")))
        let filler = String(repeating: "x", count: 70_000)
        let body =
            #"{"session_id":"SEKRIT-S","avatar":"https://cdn/x.png?v=3","name":"admin","pad":""# + filler + #""}"#
        let text = try Self.logged(request, body: Data(body.utf8))
        #expect(!text.contains("SEKRIT"), "\(text.prefix(400))")
        #expect(text.contains("x.png?v=3"), "the JSON value is kept: \(text.prefix(400))")
        #expect(text.contains(#""name":"admin""#), "a user name with a password is not a secret: \(text.prefix(400))")
    }

    @Test("Records: each Link reference is redacted on its own; Refresh's url= part too")
    func linkReferences() throws {
        let request = URLRequest(url: try #require(URL(string: "https://api.example.com/x")))
        let link =
            "<https://api.example.com/x?page=2>; rel=\"next\", <https://api.example.com/x?access_token=SEKRIT-L&page=5>; rel=\"last\""
        let text = try Self.logged(
            request, headers: ["Link": link, "Refresh": "5; url=https://h.example/?session=SEKRIT-R"], body: Data())
        #expect(!text.contains("SEKRIT"), "\(text)")
        #expect(text.contains("page=2"), "\(text)")
        #expect(text.contains("&page=5>"), "\(text)")
        let unclosed = try Self.logged(
            request, headers: ["Link": "<https://api.example.com/x?page=2>, <https://h.example/?token=SEKRIT-U"],
            body: Data())
        #expect(!unclosed.contains("SEKRIT") && unclosed.contains("page=2"), "\(unclosed)")
    }

    @Test("Records: a large JSON body after a byte-order mark, and a UTF-16 body, show no secret")
    func bomAndUTF16() throws {
        let request = URLRequest(url: try #require(URL(string: "https://api.example.com/x")))
        let filler = String(repeating: "x", count: 70_000)
        let json = #"{"access_token":"SEKRIT-7","items":""# + filler + #""}"#
        let bom = try Self.logged(request, body: Data([0xEF, 0xBB, 0xBF]) + Data(json.utf8))
        #expect(!bom.contains("SEKRIT"), "\(bom.prefix(300))")
        #expect(bom.contains("access_token"))
        let utf16 = try #require(json.data(using: .utf16LittleEndian))
        let wide = try Self.logged(request, body: utf16)
        // Its keys hold NULs, so no field name matched: shown as binary, never as text.
        #expect(wide.contains("bytes of binary data") && !wide.contains("S\\u{0}E"), "\(wide.prefix(300))")
    }

    @Test("HAR: a hostile server's huge heads of control bytes are kept bounded per entry, and the file stays valid")
    func harHeadersBounded() throws {
        let har = HARRecorder()
        let noise = String(repeating: "\u{1}", count: 1024)
        var headers: [String: String] = [:]
        // 80 KiB of control bytes (480 KiB once escaped), past the 64 KiB list cap; few entries,
        // since logging such heads is slow under ThreadSanitizer and holds a shared thread.
        for index in 0..<80 { headers["X-Flood-\(index)"] = noise }
        headers["X-Huge"] = String(repeating: "y", count: 100_000)
        let url = try #require(URL(string: "https://api.example.com/x?" + String(repeating: "q=1&", count: 2_000)))
        for _ in 0..<5 {
            let session = try #require(NetworkLogSession(logger: har, request: URLRequest(url: url), alsoHeaders: []))
            let response = try #require(
                HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: headers))
            session.response(response, body: Data("{}".utf8))
        }
        let data = har.harData()
        #expect(data.count < 5 * 128 * 1024, "\(data.count) bytes for 5 entries")
        let log = try #require(
            (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["log"] as? [String: Any])
        let entries = try #require(log["entries"] as? [[String: Any]])
        #expect(entries.count == 5)
        let response = try #require(entries.first?["response"] as? [String: Any])
        let list = try #require(response["headers"] as? [[String: String]])
        #expect(list.last?["name"] == "_truncated", "\(list.last ?? [:])")
    }

    @Test("HAR: the entries together hold at most maxBytes; later ones are counted, and a huge Content-Type is cut")
    func harByteBudget() throws {
        // Each entry's heads are near the per-entry caps (64 KiB of list, 8 KiB of one value, as
        // a hostile server can make every response): 20 of them would hold ~1.8 MB, far past a
        // budget of 512 KiB. Built by hand, since the budget is the recorder's, not the
        // redactor's.
        let budget = 512 * 1024
        let har = HARRecorder(maxBytes: budget)
        var headers: [String: String] = [:]
        for index in 0..<40 { headers["X-Fill-\(index)"] = String(repeating: "v", count: 2_000) }
        headers["Content-Type"] = "text/plain; x=" + String(repeating: "t", count: 200_000)
        for id in 1...20 as ClosedRange<UInt64> {
            har.log(NetworkLogRecord(event: .request, method: "GET", url: "https://h.example/\(id)", requestID: id))
            har.log(
                NetworkLogRecord(
                    event: .response, method: "GET", url: "https://h.example/\(id)", statusCode: 200,
                    headers: headers, bodyExcerpt: "{}", duration: 0.01, requestID: id))
        }
        let data = har.harData()
        let log = try #require(
            (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["log"] as? [String: Any])
        let entries = try #require(log["entries"] as? [[String: Any]])
        let dropped = try #require(log["_droppedEntries"] as? Int)
        #expect(entries.count >= 2 && entries.count < 10, "\(entries.count) entries kept")
        #expect(entries.count + dropped == 20)
        #expect(data.count < budget * 2, "\(data.count) bytes in the file for a budget of \(budget)")
        let content = try #require((entries.first?["response"] as? [String: Any])?["content"] as? [String: Any])
        let mimeType = try #require(content["mimeType"] as? String)
        #expect(mimeType.utf8.count <= HARRecorder.maxHeaderValueBytes + 64, "\(mimeType.utf8.count) bytes")
    }

    @Test("HAR: requests still waiting for their outcome are held within maxBytes (64 KiB bodies in flight)")
    func harPendingBudget() throws {
        let budget = 1 << 20
        let har = HARRecorder(maxBytes: budget)
        let body = Data(repeating: 0x41, count: 64 * 1024)
        var sessions: [NetworkLogSession] = []
        for index in 0..<100 {
            var request = try Self.post("https://h.example/upload/\(index)", body: body)
            request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
            sessions.append(try #require(NetworkLogSession(logger: har, request: request, alsoHeaders: [])))
        }
        // Before: all 100 held (6.4 MB of bodies) whatever the budget said.
        let load = har.pendingLoad
        #expect(load.bytes <= budget, "\(load.bytes) bytes pending")
        #expect(load.count >= 10 && load.count < 20, "\(load.count) requests held")
        // Every outcome still makes an entry or is counted; the pending load goes back to 0.
        for (index, session) in sessions.enumerated() {
            let url = try #require(URL(string: "https://h.example/upload/\(index)"))
            let response = try #require(HTTPURLResponse(url: url, statusCode: 201, httpVersion: nil, headerFields: nil))
            session.response(response, body: Data())
        }
        #expect(har.pendingLoad.count == 0 && har.pendingLoad.bytes == 0)
        let log = try #require(
            (try JSONSerialization.jsonObject(with: har.harData()) as? [String: Any])?["log"] as? [String: Any])
        let entries = try #require(log["entries"] as? [[String: Any]])
        #expect(entries.count + ((log["_droppedEntries"] as? Int) ?? 0) == 100)
    }

    @Test("Records: a credential echoed percent-encoded (in a Location) or JSON-escaped is scrubbed")
    func encodedEcho() throws {
        var request = URLRequest(
            url: try #require(URL(string: "https://api.example.com/v1/x?api_key=SEKRIT%2Fab%2Bcd%3D%3D")))
        request.setValue("Bearer SEKRIT/zz+yy==", forHTTPHeaderField: "Authorization")
        let text = try Self.logged(
            request,
            headers: [
                "Location": "https://sso.example.com/cb?state=SEKRIT%2Fzz%2Byy%3D%3D",
                "X-Echo": "SEKRIT%2Fab%2Bcd%3D%3D",
            ],
            body: Data(#"{"request":"/v1/x?api_key=SEKRIT%2Fab%2Bcd%3D%3D","token":"SEKRIT\/zz+yy=="}"#.utf8))
        #expect(!text.contains("SEKRIT"), "\(text)")
    }

    @Test("HAR: a record with a duration that is not finite does not empty the file")
    func nonFiniteDuration() throws {
        let recorder = HARRecorder()
        for (index, duration) in [0.25, .infinity, .nan, -1].enumerated() {
            let id = UInt64(index + 1)
            recorder.log(
                NetworkLogRecord(event: .request, method: "GET", url: "https://h.example/\(id)", requestID: id))
            recorder.log(
                NetworkLogRecord(
                    event: .response, method: "GET", url: "https://h.example/\(id)", statusCode: 200,
                    duration: duration,
                    requestID: id))
        }
        let object = try JSONSerialization.jsonObject(with: recorder.harData()) as? [String: Any]
        let log = try #require(object?["log"] as? [String: Any])
        #expect((log["entries"] as? [Any])?.count == 4)
    }
}

/// A transport that hides the deferred-response fast path of the one it wraps.
private struct PlainTransport: HTTPTransportProtocol {
    let inner: any HTTPTransportProtocol
    func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        try await inner.data(for: request)
    }
}
