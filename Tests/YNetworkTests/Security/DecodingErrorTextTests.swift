import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing
import YNetwork

/// A decoder quotes the server's values in its error: `NetworkError.deserialization` carried a
/// 1 MB value, or the session's token echoed by the server, into every log of it. It now carries
/// a `DecodingError` of the same case and path whose text is cut and scrubbed of what was sent.
@Suite("YNetwork: a deserialization error's text is capped and scrubbed of the session's credentials")
struct YNetworkDecodingErrorTextTests {
    enum Role: String, Decodable, Sendable { case admin, user }
    struct Account: Decodable, Sendable { let role: Role }
    struct Roles: Decodable, Sendable { let roles: [String: Role] }

    private struct Session: SessionManager {
        func apply(_ request: inout URLRequest) {
            request.setValue("Bearer yn-echo-secret-token", forHTTPHeaderField: "Authorization")
            // A name no rule knows as secret: the session added it, so it is one.
            request.setValue("yn-plain-session-value", forHTTPHeaderField: "X-Client-Ref")
        }

        func refresh(networkManager: NetworkManager) async -> Bool { false }
    }

    private struct Get: NetworkRequest {
        var path: PathRepresentable
        var method: HttpMethod { .GET }
    }

    @Test("An echoed session token and a 1 MB value in an enum field")
    func echoedAndHuge() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/echo") { request in
            .json(#"{"role":"\#(request.header("Authorization") ?? "")"}"#)
        }
        server.route("GET", "/huge") { _ in .json(#"{"role":"\#(String(repeating: "r", count: 1 << 20))"}"#) }
        let manager = makeManager(server: server, sessionManager: Session())
        for path in ["echo", "huge"] {
            do {
                let _: Account = try await manager.submit(Get(path: path))
                Issue.record("\(path): decoded")
            } catch {
                guard case YNetwork.NetworkError.deserialization(let cause) = error,
                    case DecodingError.dataCorrupted(let context) = cause
                else {
                    Issue.record("\(path): \(error)")
                    continue
                }
                #expect(context.codingPath.map(\.stringValue) == ["role"])
                let text = String(describing: error)
                // Before: the token in the text, and 1 MB of it for /huge.
                #expect(!text.contains("yn-echo-secret-token"), "\(path): \(text.prefix(300))")
                #expect(text.utf8.count < 2_048, "\(path): \(text.utf8.count) bytes")
            }
        }
        #expect(server.requests(path: "/echo").first?.header("Authorization") == "Bearer yn-echo-secret-token")
    }

    @Test("The session's own header, and a token echoed as a dictionary key (in the coding path), are scrubbed")
    func sessionHeaderAndKey() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/session") { request in .json(#"{"role":"\#(request.header("X-Client-Ref") ?? "")"}"#) }
        server.route("GET", "/key") { request in
            .json(#"{"roles":{"\#(request.header("Authorization") ?? "")":"nope"}}"#)
        }
        let manager = makeManager(server: server, sessionManager: Session())
        do {
            let _: Account = try await manager.submit(Get(path: "session"))
            Issue.record("decoded")
        } catch {
            // Before: the session's value in the text (its header name is not a secret name).
            #expect(!String(describing: error).contains("yn-plain-session-value"), "\(error)")
        }
        do {
            let _: Roles = try await manager.submit(Get(path: "key"))
            Issue.record("decoded")
        } catch {
            guard case YNetwork.NetworkError.deserialization(let cause) = error,
                case DecodingError.dataCorrupted(let context) = cause
            else {
                Issue.record("\(error)")
                return
            }
            #expect(context.codingPath.count == 2)
            // Before: the token as the path's second key.
            #expect(!String(describing: error).contains("yn-echo-secret-token"), "\(error)")
        }
    }
}
