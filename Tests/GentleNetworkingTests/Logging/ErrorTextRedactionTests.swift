import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Error messages built from another error (a refresh closure's, an event stream's connection
/// failure, a store's) never copy a credential from that error's user info: a `URLError`'s
/// failing URL prints its whole query on Linux as on Apple platforms, and the message is now
/// also `localizedDescription`, which apps show in alerts and send to crash reporters.
@Suite("Error messages do not copy a failing URL's secrets")
struct ErrorTextRedactionTests {
    static let secretURL = URL(string: "https://auth.example.com/token?refresh_token=S3CR3T-R3FR3SH")!
    static var leakyError: URLError {
        URLError(.timedOut, userInfo: [NSURLErrorFailingURLErrorKey: secretURL])
    }

    @Test("A refresh closure's URLError: the service's 401 error says the refresh failed, without its token")
    func refreshFailureOnTheWire() async throws {
        #expect(String(describing: Self.leakyError).contains("S3CR3T"), "the control: Foundation prints it")
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/me") { _ in .status(401) }
        let auth = InMemoryAuthService(token: "old")
        let transport = ReauthTransport(inner: try CurlTransport(), authService: auth) { throw Self.leakyError }
        let service = HTTPNetworkService(transport: transport, authService: auth)
        do {
            let _: Model = try await service.request(
                to: Endpoint(path: "/me", method: .get, requiresAuth: true),
                via: DefaultAPIEnvironment(baseURL: server.baseURL))
            Issue.record("a failed refresh must throw")
        } catch let error as NetworkError {
            #expect(error.message.contains("refresh"), "\(error.message)")
            for text in [
                error.message, (error as any Error).localizedDescription, String(describing: error),
                String(reflecting: error),
            ] {
                #expect(!text.contains("S3CR3T"), "\(text)")
            }
            var dumped = ""
            dump(error, to: &dumped)
            #expect(!dumped.contains("S3CR3T"), "\(dumped)")
        }
        #expect(server.requests(path: "/me").count == 1)
    }

    @Test("An event stream that cannot connect or breaks: the failure's text has no secret")
    func eventSourceFailures() {
        var state = EventSourceState(policy: EventSourcePolicy())
        let connect = state.connectFailed(URLError(.badURL, userInfo: Self.leakyError.userInfo), randomUnit: 0)
        #expect(!"\(connect)".contains("S3CR3T"), "\(connect)")
        #expect("\(connect)".contains("-1000"), "the code stays: \(connect)")
        var broken = EventSourceState(policy: EventSourcePolicy())
        let ended = broken.ended(failure: URLError(.badURL, userInfo: Self.leakyError.userInfo), randomUnit: 0)
        #expect(!"\(ended)".contains("S3CR3T"), "\(ended)")
    }

    @Test("A store's error, a retry event: no secret in their text")
    func storeAndRetryText() {
        let failure = NetworkError.authorizationFailure(Self.leakyError, url: nil)
        #expect(!failure.message.contains("S3CR3T"), "\(failure.message)")
        let event = RetryEvent(
            request: URLRequest(url: URL(string: "https://api.example.com/a")!), retryNumber: 1, delay: 0.5,
            outcome: .failure(Self.leakyError))
        #expect(!event.description.contains("S3CR3T"), "\(event.description)")
    }

    @Test("A library error beneath another shows its own text in dump, not a domain and code")
    func nestedLibraryErrorInDump() {
        let reauth = ReauthError(
            .refreshFailed, message: "x",
            underlyingError: NetworkError(.decodingFailed, message: "The body is not a Model."))
        var dumped = ""
        dump(reauth, to: &dumped)
        #expect(dumped.contains("The body is not a Model."), "\(dumped)")
        let store = CredentialStoreError(.corruptFile, path: "/tmp/c", message: "Not a credentials file.")
        #expect("\(Redactor.reflected(store))".contains("Not a credentials file."))
    }
}
