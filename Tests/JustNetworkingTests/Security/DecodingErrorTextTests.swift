import Foundation
import GentleNetworking
import GentleNetworkingTesting
import JustNetworking
import Testing

/// A decoder quotes the server's values in its error ("Cannot initialize Role from invalid
/// String value …"): a 1 MB value made a 1 MB error, and a token the server echoed into such a
/// field reached whatever logged the error. Both requesters deliver a `DecodingError` of the
/// same case and path, its text cut and scrubbed of the request's credentials.
@Suite("JustNetworking: a decoding error's text is capped and scrubbed of the request's credentials")
struct DecodingErrorTextTests {
    enum Role: String, Decodable, Sendable { case admin, user }
    struct Account: Decodable, Sendable { let role: Role }

    @Test("An echoed token and a 1 MB value in an enum field", arguments: RequesterKind.allCases)
    func echoedAndHuge(kind: RequesterKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/echo") { request in
            .json(#"{"role":"\#(request.header("Authorization") ?? "")"}"#)
        }
        server.route("GET", "/huge") { _ in .json(#"{"role":"\#(String(repeating: "r", count: 1 << 20))"}"#) }
        for path in ["echo", "huge"] {
            let factory = RequestFactory(
                router: FixedBaseRouter(server.baseURL, path),
                requestBuilder: addHeaders(["Authorization": "Bearer jn-echo-secret-token"]))
            let marked = MarkedQueue()
            let delivery = await deliver(
                RequestType<Account>(responseQueue: marked.queue, requestFactory: factory), via: kind.make(),
                checking: marked)
            let error = try #require(delivery.error)
            guard case DecodingError.dataCorrupted(let context) = error else {
                Issue.record("\(path): not a DecodingError.dataCorrupted: \(error)")
                continue
            }
            #expect(context.codingPath.map(\.stringValue) == ["role"])
            let text = String(describing: error)
            // Before: the token in the text, and 1 MB of it for /huge.
            #expect(!text.contains("jn-echo-secret-token"), "\(path): \(text.prefix(300))")
            #expect(text.utf8.count < 2_048, "\(path): \(text.utf8.count) bytes")
        }
    }
}
