import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

/// `localizedDescription`, which apps show in alerts and write to logs, says what happened.
@Suite("Errors are LocalizedError: localizedDescription is the library's own text")
struct ErrorDescriptionTests {
    @Test("A 404 over the wire: localizedDescription names the status, never the token")
    func statusOverTheWire() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/missing") { _ in LoopbackResponse.status(404) }
        let service = HTTPNetworkService(
            transport: try CurlTransport(), authService: InMemoryAuthService(token: "secret-token"))
        do {
            let _: Model = try await service.request(
                to: Endpoint(path: "/missing", method: .get, requiresAuth: true),
                via: DefaultAPIEnvironment(baseURL: server.baseURL))
            Issue.record("a 404 must throw")
        } catch let error as NetworkError {
            let text = (error as any Error).localizedDescription
            #expect(text == error.message)
            #expect(text.contains("404"))
            #expect(!text.contains("secret-token"))
            #expect(!text.contains("The operation could not be completed"))
            if case .httpStatusError(let status) = error {
                #expect((status as any Error).localizedDescription == status.message)
            } else {
                Issue.record("expected .httpStatusError, got \(error)")
            }
        }
        #expect(server.requests(path: "/missing").count == 1)
    }

    @Test("A refused connection: the transport error's text is its message")
    func transportFailureOverTheWire() async throws {
        let server = try LoopbackServer()
        let url = server.url("/gone")
        server.shutdown()  // nothing listens on the port any more
        do {
            _ = try await CurlTransport().data(for: URLRequest(url: url))
            Issue.record("a closed port must throw")
        } catch let error as TransportError {
            #expect(error.code == .cannotConnect)
            #expect((error as any Error).localizedDescription == error.message)
            #expect(!error.message.isEmpty)
        }
    }

    @Test("Every public error type of the core answers its own text")
    func everyType() {
        let reauth = ReauthError(.refreshFailed, message: "The refresh closure threw.")
        #expect((reauth as any Error).localizedDescription == "The refresh closure threw.")
        let store = CredentialStoreError(.corruptFile, path: "/tmp/x", message: "Not a credentials file.")
        #expect((store as any Error).localizedDescription == "Not a credentials file.")
        let streaming = StreamingError.lineTooLong(limit: 8)
        #expect((streaming as any Error).localizedDescription == streaming.description)
        let events = EventSourceFailure.status(503)
        #expect((events as any Error).localizedDescription == "The event stream was refused with HTTP 503.")
        let network = NetworkError(.decodingFailed, message: "The body is not a Model.")
        #expect((network as any Error).localizedDescription == "The body is not a Model.")
        let transport = TransportError(.timedOut, url: nil, message: "No byte for 3 s.")
        #expect((transport as any Error).localizedDescription == "No byte for 3 s.")
    }
}
