import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Whether `text` holds a character that ``PrintableText`` escapes.
private func hasControl(_ text: String) -> Bool {
    text.unicodeScalars.contains(where: PrintableText.isControl)
}

@Suite("Server text is printed on one line: control characters escaped")
struct ServerTextEscapingTests {
    @Test("Escapes: CR, LF, tab, ESC, DEL, C1, bidi controls and separators; other text unchanged")
    func escaping() {
        #expect(PrintableText.escaping("plain café ✓ \\n") == "plain café ✓ \\n")
        #expect(PrintableText.escaping("a\r\nb\tc") == #"a\r\nb\tc"#)
        #expect(PrintableText.escaping("\u{1B}[2J\u{7F}\u{0}") == #"\u001B[2J\u007F\u0000"#)
        #expect(PrintableText.escaping("x\u{9B}31m") == #"x\u009B31m"#)
        #expect(PrintableText.escaping("abc\u{202E}fdp.exe") == #"abc\u202Efdp.exe"#)
        #expect(PrintableText.escaping("\u{2066}\u{2069}\u{2028}\u{2029}") == #"\u2066\u2069\u2028\u2029"#)
        #expect(PrintableText.escaping("\u{61C}\u{200E}\u{200F}") == #"\u061C\u200E\u200F"#)
        // Neighbours of the ranges are kept.
        let neighbours = "\u{A0}\u{61B}\u{61D}\u{200D}\u{2010}\u{2027}\u{202F}\u{2065}\u{206A}"
        #expect(PrintableText.escaping(neighbours) == neighbours)
        // An escaped JSON text is still JSON, with the same strings.
        let json = "{\"a\":\"x\u{2028}\u{7F}\u{85}y\"}"
        let escaped = PrintableText.escaping(json)
        #expect(escaped != json)
        let decoded = try? JSONSerialization.jsonObject(with: Data(escaped.utf8)) as? [String: String]
        #expect(decoded?["a"] == "x\u{2028}\u{7F}\u{85}y")
    }

    static let forgedLine = "oops\r\n2026-12-03T00:00:00Z INFO admin signed in\u{1B}[2J\u{1B}]0;title\u{07}"

    @Test(
        "An error body and a header with CR/LF/ESC: the error message and the log records escape them",
        arguments: TransportKind.all)
    func errorBodyAndHeader(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/err") { _ in
            LoopbackResponse(
                status: 500, headers: [("Content-Type", "text/plain"), ("X-Note", "a\u{1B}[31mred")],
                body: Data(Self.forgedLine.utf8))
        }
        let logger = RecordingLogger()
        let service = HTTPNetworkService(transport: try kind.make(), authService: InMemoryAuthService(), logger: logger)

        let error = await #expect(throws: NetworkError.self) {
            try await service.requestVoid(
                to: Endpoint(path: "/err", method: .get), via: DefaultAPIEnvironment(baseURL: server.baseURL))
        }

        let message = try #require(error).message
        #expect(!hasControl(message), "\(message.debugDescription)")
        #expect(message.contains(#"oops\r\n2026-12-03T00:00:00Z INFO admin signed in\u001B[2J"#), "\(message)")
        #expect(!hasControl(String(describing: try #require(error))))
        let records = logger.records
        #expect(records.count >= 2)
        for record in records {
            #expect(!hasControl(record.description), "\(record.description.debugDescription)")
            #expect(!hasControl(record.bodyExcerpt ?? ""), "\((record.bodyExcerpt ?? "").debugDescription)")
            #expect(!hasControl(record.errorDescription ?? ""))
            for (name, value) in record.headers {
                #expect(!hasControl(name) && !hasControl(value), "\(name.debugDescription): \(value.debugDescription)")
            }
        }
        let shown = records.compactMap { $0.headers.first { $0.key.lowercased() == "x-note" }?.value }
        #expect(shown.contains(#"a\u001B[31mred"#), "\(shown)")
        #expect(records.contains { ($0.bodyExcerpt ?? "").contains(#"oops\r\n"#) })
    }

    struct RefreshDenied: Error, CustomStringConvertible {
        var description: String { "refresh denied: " + ServerTextEscapingTests.forgedLine }
    }

    @Test(
        "A failed refresh whose error quotes server text: the error and the failure record escape it",
        arguments: TransportKind.all)
    func failureRecord(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/data") { _ in .json(#"{"error":"expired"}"#, status: 401) }
        let logger = RecordingLogger()
        let auth = InMemoryAuthService(token: "t0")
        let reauth = ReauthTransport(inner: try kind.make(), authService: auth) { throw RefreshDenied() }
        let service = HTTPNetworkService(transport: reauth, authService: auth, logger: logger)

        let error = await #expect(throws: NetworkError.self) {
            try await service.requestVoid(
                to: Endpoint(path: "/data", method: .get, requiresAuth: true),
                via: DefaultAPIEnvironment(baseURL: server.baseURL))
        }

        let message = try #require(error).message
        #expect(message.contains(#"refresh denied: oops\r\n2026"#), "\(message)")
        #expect(!hasControl(message), "\(message.debugDescription)")
        let failure = try #require(logger.records.first { $0.event == .failure })
        let shown = try #require(failure.errorDescription)
        #expect(shown.contains(#"oops\r\n2026"#), "\(shown)")
        #expect(!hasControl(shown), "\(shown.debugDescription)")
        #expect(!hasControl(failure.description), "\(failure.description.debugDescription)")
    }

    enum Kind: String, Decodable { case known }
    struct Model: Decodable { let kind: Kind }

    @Test("A decoding failure quoting a server string escapes its control characters")
    func decodingFailure() async throws {
        let body = Data(#"{"kind":"x\n2026 INFO forged\u001b[0m"}"#.utf8)
        let service = HTTPNetworkService(
            transport: CannedResponseTransport(cannedResponse: CannedResponse(data: body)),
            authService: InMemoryAuthService())

        let error = await #expect(throws: NetworkError.self) {
            let _: Model = try await service.request(
                to: Endpoint(path: "/m", method: .get), via: DefaultAPIEnvironment(baseURL: URL(string: "https://h")!))
        }

        let message = try #require(error).message
        #expect(!hasControl(message), "\(message.debugDescription)")
        #expect(
            message.contains(#"\n2026 INFO forged\u001B[0m"#), "the excerpt (or reason) quotes the value: \(message)")
    }
}
