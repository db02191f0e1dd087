import Foundation
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The rule by which a redirect is refused on Apple platforms when the session itself adds a
/// credential header to every request (the system puts `httpAdditionalHeaders` on the next hop
/// again, past any rule of ours): `URLSessionTransport` and JustNetworking's requester there share
/// it. The Apple wiring is type-checked only; the decision is tested here.
@Suite("Redirects: a session's own credential header never follows a hop to another origin")
struct RedirectSessionCredentialTests {
    private func configuration(_ headers: [String: String]) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders = headers
        return configuration
    }

    private func url(_ text: String) throws -> URL { try #require(URL(string: text)) }

    @Test("Another origin with a credential header in the configuration: refused; same origin or an upgrade: followed")
    func decisions() throws {
        let from = try url("http://api.example.com/v1/items")
        let credentials = [
            configuration(["Authorization": "Bearer t"]), configuration(["Cookie": "sid=1"]),
            configuration(["X-API-Key": "k"]), configuration(["x-auth-token": "k", "Accept": "application/json"]),
        ]
        for configured in credentials {
            #expect(
                RedirectTracker.sessionCredentialWouldCross(
                    to: try url("https://evil.example/"), from: from, configuration: configured))
            #expect(
                RedirectTracker.sessionCredentialWouldCross(
                    to: try url("http://api.example.com:8080/x"), from: from, configuration: configured),
                "another port is another origin")
            #expect(
                !RedirectTracker.sessionCredentialWouldCross(
                    to: try url("http://API.example.com/v2"), from: from, configuration: configured))
            #expect(
                !RedirectTracker.sessionCredentialWouldCross(
                    to: try url("https://api.example.com/v1/items"), from: from, configuration: configured),
                "the same host moved to https keeps its credential")
        }
        // No credential among the configuration's headers, or none at all: any origin.
        for plain in [configuration(["Accept": "application/json", "X-Client": "app/1"]), configuration([:])] {
            #expect(
                !RedirectTracker.sessionCredentialWouldCross(
                    to: try url("https://evil.example/"), from: from, configuration: plain))
        }
        // A header listed as a credential where the call is made (an auth service's own field).
        let tenant = configuration(["X-Tenant": "t-1"])
        #expect(
            !RedirectTracker.sessionCredentialWouldCross(
                to: try url("https://evil.example/"), from: from, configuration: tenant))
        #expect(
            RedirectTracker.sessionCredentialWouldCross(
                to: try url("https://evil.example/"), from: from, configuration: tenant,
                listed: Origin.credentialHeaders + ["X-Tenant"]))
        #expect(
            !RedirectTracker.isUpgrade(
                from: try url("http://api.example.com:8080/"), to: try url("https://api.example.com/")))
        #expect(
            !RedirectTracker.isUpgrade(
                from: try url("https://api.example.com/"), to: try url("https://api.example.com/")))
    }
}
