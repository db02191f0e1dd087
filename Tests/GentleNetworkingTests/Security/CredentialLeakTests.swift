import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

/// Credentials never reach a log record, an error's description, or the files of the ETag
/// store, even when the server echoes them back in bodies and headers. The token travels in
/// `Authorization`, the cookie in `Cookie`, the API key in `X-API-Key`; the server sets a cookie
/// of its own with `Set-Cookie`. Every secret holds `SEKRIT`, so one grep finds any of them.
@Suite("Credentials never reach logs, error descriptions or the ETag store")
struct CredentialLeakTests {
    static let token = "tok-SEKRIT-7f3a"
    static let cookie = "ck-SEKRIT-91bd"
    static let apiKey = "ak-SEKRIT-22c1"
    static let setCookie = "sc-SEKRIT-55e0"
    static let secrets = [token, cookie, apiKey, setCookie, "SEKRIT"]

    static let headers = ["Cookie": "session=\(cookie)", "X-API-Key": apiKey]

    /// The secrets found in `text`.
    static func leaks(in text: String) -> [String] {
        secrets.filter { text.contains($0) }
    }

    /// Everything the client sent that carries a credential, echoed as one string.
    static func echo(_ request: LoopbackRequest) -> String {
        ["Authorization", "Cookie", "X-API-Key"].compactMap { request.header($0) }.joined(separator: " | ")
    }

    /// A response that echoes the credentials in a non-secret-looking JSON field and header,
    /// and sets a cookie.
    static func echoing(_ request: LoopbackRequest, status: Int = 200) -> LoopbackResponse {
        let echoed = echo(request).replacingOccurrences(of: "\"", with: "'")
        return .json(
            #"{"id":1,"property":"you sent \#(echoed)","note":"\#(echoed)"}"#, status: status,
            headers: [("Set-Cookie", "session=\(setCookie); Path=/; HttpOnly"), ("X-Request-Echo", echoed)])
    }

    static func server() throws -> LoopbackServer {
        let server = try LoopbackServer()
        server.route("GET", "/ok") { echoing($0) }
        server.route("GET", "/unauthorized") { echoing($0, status: 401) }
        server.route("GET", "/forbidden") { echoing($0, status: 403) }
        server.route("GET", "/server-error") { echoing($0, status: 500) }
        server.route("GET", "/text") { request in
            var response = LoopbackResponse.text("not JSON; you sent \(echo(request))")
            response.headers.append(("Set-Cookie", "session=\(setCookie)"))
            return response
        }
        server.route("GET", "/big") { request in
            .text(String(repeating: "you sent \(echo(request)) ", count: 200))
        }
        server.route("GET", "/loop") { _ in .redirect(to: "/loop2") }
        server.route("GET", "/loop2") { _ in .redirect(to: "/loop") }
        server.route("GET", "/teapot") { echoing($0, status: 418) }
        // The error excerpt is cut at 256 bytes: here the cut falls inside the echoed token.
        server.route("GET", "/cut") { _ in
            .text(String(repeating: "x", count: 244) + token + " and more text after it", status: 400)
        }
        return server
    }

    /// Everything a log record says, its mirror included (`dump`, `String(reflecting:)`): the
    /// record redacts when read, and must not show what it redacts from.
    static func text(of record: NetworkLogRecord) -> String {
        var dumped = ""
        dump(record, to: &dumped, maxDepth: 12)
        return [
            dumped, String(reflecting: record), record.description, record.method, record.url,
            record.headers.map { "\($0.key): \($0.value)" }.sorted()
                .joined(separator: "\n"),
            record.bodyExcerpt ?? "", record.errorDescription ?? "", String(describing: record.step),
            String(describing: record.metrics),
        ].joined(separator: "\n")
    }

    /// Everything an error says about itself.
    static func text(of error: any Error) -> String {
        var parts = [String(describing: error), error.localizedDescription, String(reflecting: error)]
        if let error = error as? NetworkError {
            parts.append(error.message)
        }
        return parts.joined(separator: "\n")
    }

    @Test(
        "Request, response and failure records and every error kind hold no credential, with or without a logger",
        arguments: TransportKind.all, [true, false])
    func logsAndErrors(kind: TransportKind, logging: Bool) async throws {
        let server = try Self.server()
        defer { server.shutdown() }
        let closed = try RefusingPort()
        defer { withExtendedLifetime(closed) {} }  // refusing until the end
        let closedURL = closed.baseURL
        let logger = RecordingLogger()
        let service = HTTPNetworkService(
            transport: try kind.make(maxRedirects: 3), authService: InMemoryAuthService(token: Self.token),
            logger: logging ? logger : NoOpNetworkLogger())
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
        func endpoint(_ path: String, limit: Int64? = nil) -> Endpoint {
            Endpoint(
                path: path, method: .get, query: [URLQueryItem(name: "api_key", value: Self.apiKey)],
                requiresAuth: true, headers: Self.headers, maxResponseBytes: limit)
        }

        let model: Model = try await service.request(to: endpoint("/ok"), via: environment)
        #expect(model.id == 1)
        #expect(server.requests(path: "/ok").first?.header("Authorization") == "Bearer \(Self.token)")

        var errors: [(String, any Error)] = []
        for (path, limit) in [
            ("/unauthorized", nil), ("/forbidden", nil), ("/server-error", nil), ("/teapot", nil), ("/cut", nil),
            ("/text", nil),
            ("/big", 64), ("/loop", nil),
        ] as [(String, Int64?)] {
            do {
                let _: Model = try await service.request(to: endpoint(path, limit: limit), via: environment)
                Issue.record("\(path) succeeded")
            } catch {
                errors.append((path, error))
            }
        }
        do {
            let _: Model = try await service.request(
                to: endpoint("/refused"), via: DefaultAPIEnvironment(baseURL: closedURL))
            Issue.record("a closed port answered")
        } catch {
            errors.append(("/refused", error))
        }

        let kinds = errors.map { ($0.1 as? NetworkError).map { "\($0.kind)" } ?? "\(type(of: $0.1))" }
        #expect(Set(kinds).count >= 6, "the error kinds covered: \(kinds)")
        for (path, error) in errors {
            #expect(Self.leaks(in: Self.text(of: error)).isEmpty, "\(path): \(Self.text(of: error))")
        }
        if logging {
            let records = logger.records
            // The redirect loop's hops are reported as they are followed.
            #expect(Set(records.map(\.event)) == [.request, .redirect, .response, .failure])
            #expect(records.contains { $0.metrics?.transactions.isEmpty == false })
            #expect(records.contains { $0.event == .response && $0.headers.keys.contains("Set-Cookie") })
            for record in records {
                #expect(Self.leaks(in: Self.text(of: record)).isEmpty, "\(record.event): \(Self.text(of: record))")
            }
        }
    }

    @Test("No file the DiskETagStore writes holds the token, the cookies or the API key", arguments: TransportKind.all)
    func etagStoreFiles(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/cached") { request in
            if request.header("If-None-Match") == "\"v1\"" {
                // A 304 may renew the session cookie: it must not reach the entry either.
                // So may a token of the server's own in a header.
                return LoopbackResponse(
                    status: 304,
                    headers: [
                        ("ETag", "\"v1\""), ("Set-Cookie", "session=\(Self.setCookie)-renewed; Path=/"),
                        ("X-Amz-Security-Token", "\(Self.setCookie)-renewed-header"),
                    ])
            }
            return .json(
                #"{"id":1,"property":"public"}"#,
                headers: [
                    ("ETag", "\"v1\""), ("Set-Cookie", "session=\(Self.setCookie); Path=/"),
                    ("X-Access-Token", "\(Self.setCookie)-header"), ("X-Public", "kept"),
                ])
        }
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("etags")
        let store = DiskETagStore(directory: directory)
        let service = HTTPNetworkService(
            transport: ETagTransport(inner: try kind.make(), store: store),
            authService: InMemoryAuthService(token: Self.token))
        let endpoint = Endpoint(
            path: "/cached", method: .get, query: [URLQueryItem(name: "api_key", value: Self.apiKey)],
            requiresAuth: true, headers: Self.headers)

        for _ in 0..<3 {  // stored, revalidated (a 304 with a cookie), served from the revalidated entry
            let model: Model = try await service.request(
                to: endpoint, via: DefaultAPIEnvironment(baseURL: server.baseURL))
            #expect(model.property == "public")
        }

        #expect(server.requests(path: "/cached").last?.header("If-None-Match") == "\"v1\"", "the entry was used")
        #expect(server.requests(path: "/cached").count == 3)
        let files = try #require(FileManager.default.subpaths(atPath: directory.path))
        #expect(!files.isEmpty)
        for file in files {
            let contents = try Data(contentsOf: directory.appendingPathComponent(file))
            let text = String(decoding: contents, as: UTF8.self)
            #expect(Self.leaks(in: text).isEmpty, "\(file): \(text)")
        }
        #expect(
            files.contains { file in
                let contents = (try? Data(contentsOf: directory.appendingPathComponent(file))) ?? Data()
                return String(decoding: contents, as: UTF8.self).contains("X-Public")
            }, "the entry keeps the other headers")
    }
}
