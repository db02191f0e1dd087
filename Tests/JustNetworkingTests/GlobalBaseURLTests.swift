import Foundation
import GentleNetworkingTesting
import JustNetworking
import Testing

/// Every test that sets or clears the global `NetworkConfiguration.shared` lives in this suite
/// (or a suite nested in it, such as the README's global-URL samples), which runs one test at a
/// time. Each test sets the state it needs first and leaves the global cleared.
@Suite("The global base URL", .serialized)
struct GlobalBaseURLTests {
    /// A router that relies on the global base URL.
    enum GlobalRouter: Router {
        case user(id: String)

        var route: Route {
            switch self {
            case .user(let id): Route(path: "user/\(id)", method: .get)
            }
        }
    }

    @Test("setCurrentURL, the static and the shared instance, is read by routers at each use")
    func setAndRead() throws {
        defer { NetworkConfiguration.reset() }
        let first = try #require(URL(string: "https://one.example/api"))
        let second = try #require(URL(string: "https://two.example"))

        NetworkConfiguration.setCurrentURL(first)
        #expect(NetworkConfiguration.shared.currentURL == first)
        #expect(GlobalRouter.user(id: "1").baseURL == first)
        #expect(GlobalRouter.user(id: "1").completeURL.absoluteString == "https://one.example/api/user/1")

        NetworkConfiguration.shared.setCurrentURL(second)
        #expect(GlobalRouter.user(id: "1").completeURL.absoluteString == "https://two.example/user/1")
        #expect(
            try RequestFactory(router: GlobalRouter.user(id: "2")).makeURLRequest().url
                == URL(string: "https://two.example/user/2"))
    }

    @Test("reset and clearCurrentURL forget the URL; routers then answer the placeholder")
    func resetAndClear() throws {
        defer { NetworkConfiguration.reset() }
        NetworkConfiguration.setCurrentURL(try #require(URL(string: "https://h")))
        NetworkConfiguration.reset()
        #expect(NetworkConfiguration.shared.currentURL == nil)
        #expect(GlobalRouter.user(id: "1").baseURL == NetworkConfiguration.unsetBaseURL)

        NetworkConfiguration.setCurrentURL(try #require(URL(string: "https://h")))
        NetworkConfiguration.clearCurrentURL()
        #expect(NetworkConfiguration.shared.currentURL == nil)

        NetworkConfiguration.setCurrentURL(try #require(URL(string: "https://h")))
        NetworkConfiguration.shared.clearCurrentURL()
        #expect(NetworkConfiguration.shared.currentURL == nil)
    }

    @Test("With no URL set, building the request throws baseURLNotSet naming the router")
    func unsetThrows() {
        NetworkConfiguration.reset()
        #expect(throws: JustNetworkingError.baseURLNotSet(router: "GET user/12")) {
            try RequestFactory(router: GlobalRouter.user(id: "12")).makeURLRequest()
        }
    }

    @Test("With no URL set, a router that overrides baseURL still works")
    func overrideIgnoresGlobal() throws {
        NetworkConfiguration.reset()
        struct Own: Router {
            var route: Route { Route(path: "x", method: .post) }
            var baseURL: URL { URL(fileURLWithPath: "/srv") }
        }
        let request = try RequestFactory(router: Own()).makeURLRequest()
        #expect(request.url?.absoluteString == "file:///srv/x")
        #expect(request.httpMethod == "POST")
    }

    @Test(
        "A request that reached the server with the URL set fails with baseURLNotSet once it is cleared, and nothing is sent",
        arguments: RequesterKind.allCases)
    func requesterWithoutBaseURL(kind: RequesterKind) async throws {
        defer { NetworkConfiguration.reset() }
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/user/12") { _ in .json(#"{"id":"12","name":"a"}"#) }
        let requester = kind.make()
        let marked = MarkedQueue()
        let request = RequestType<User>(
            responseQueue: marked.queue, requestFactory: RequestFactory(router: GlobalRouter.user(id: "12")))

        NetworkConfiguration.setCurrentURL(server.baseURL)
        let sent = await deliver(request, via: requester, checking: marked)
        #expect(sent.value == User(id: "12", name: "a"))
        #expect(server.receivedRequests.count == 1)

        NetworkConfiguration.reset()
        let refused = await deliver(request, via: requester, checking: marked)
        #expect(refused.error as? JustNetworkingError == .baseURLNotSet(router: "GET user/12"))
        #expect(refused.onResponseQueue)
        #expect(server.receivedRequests.count == 1)
    }
}

/// `NetworkConfiguration` instances of their own (not the global one).
@Suite("NetworkConfiguration instances")
struct NetworkConfigurationInstanceTests {
    @Test("An instance starts with the URL given, or none")
    func initialState() throws {
        let url = try #require(URL(string: "https://h"))
        #expect(NetworkConfiguration().currentURL == nil)
        #expect(NetworkConfiguration(currentURL: url).currentURL == url)
    }

    @Test("GlobalConfiguration, the 1.x name, is the same configuration: setCurrentURL and url")
    func globalConfigurationName() throws {
        defer { NetworkConfiguration.reset() }
        let url = try #require(URL(string: "https://legacy.example/v1"))
        GlobalConfiguration.setCurrentURL(url)
        #expect(GlobalConfiguration.shared.url == url)
        #expect(NetworkConfiguration.shared.currentURL == url)
        #expect(
            GlobalBaseURLTests.GlobalRouter.user(id: "3").completeURL.absoluteString
                == "https://legacy.example/v1/user/3")
        NetworkConfiguration.reset()
        #expect(GlobalConfiguration.shared.url == nil)
    }

    @Test("The placeholder is a fixed file URL")
    func placeholder() {
        #expect(NetworkConfiguration.unsetBaseURL.absoluteString == "file:///justnetworking-base-url-not-set")
    }

    @Test("Concurrent writers and readers see only URLs that were set")
    func concurrentAccess() async throws {
        let configuration = NetworkConfiguration()
        let urls = try (0..<20).map { try #require(URL(string: "https://h\($0).example")) }
        let seen = await withTaskGroup(of: URL?.self) { group in
            for url in urls {
                group.addTask {
                    configuration.setCurrentURL(url)
                    return configuration.currentURL
                }
                group.addTask {
                    configuration.clearCurrentURL()
                    return configuration.currentURL
                }
            }
            return await group.reduce(into: [URL?]()) { $0.append($1) }
        }
        #expect(seen.count == 40)
        #expect(seen.allSatisfy { $0.map(urls.contains) ?? true })
    }
}
