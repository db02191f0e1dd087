// The code samples of the GentleNetworking README (seeds 000/001), compiled as they are written.
// Where the README writes `.model`, the explicit `APIEndpoint.model` stands. The samples that
// talk to a server run against the loopback server; the rest run against canned transports.
import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

// MARK: - README "1. Define your API and endpoints" (verbatim)

nonisolated enum APIEndpoint: EndpointProtocol {
    case signIn(username: String, password: String)
    case model(id: Int)
    case models

    var path: String {
        switch self {
        case .signIn: "/api/signIn"
        case .model(let id): "/api/model/\(id)"
        case .models: "/api/models"
        }
    }

    var method: HTTPMethod {
        switch self {
        case .signIn: .post
        case .model, .models: .get
        }
    }

    var query: [URLQueryItem]? {
        switch self {
        case .signIn, .model, .models: nil
        }
    }

    var body: [String: EndpointAnyEncodable]? {
        switch self {
        case .signIn(let username, let password):
            [
                "username": EndpointAnyEncodable(username),
                "password": EndpointAnyEncodable(password),
            ]
        case .model, .models: nil
        }
    }

    var requiresAuth: Bool {
        switch self {
        case .model, .models: true
        case .signIn(username: _, password: _): false
        }
    }
}

struct AuthTokenModel: Decodable, Sendable {
    let token: String
}

/// README steps 1–5 exactly as written, with the service, environment and auth service passed in
/// so that the test can point them at the loopback server and a temporary credentials file.
func readmeBasicUsage(
    networkService: HTTPNetworkService, apiEnvironment: DefaultAPIEnvironment,
    keyChainAuthService: SystemKeyChainAuthService
) async throws -> (Model, [Model]) {
    let authTokenModel: AuthTokenModel = try await networkService.request(
        to: APIEndpoint.signIn(username: "user", password: "pass"),
        via: apiEnvironment
    )

    try await keyChainAuthService.saveAccessToken(
        authTokenModel.token
    )

    let model: Model = try await networkService.request(
        to: APIEndpoint.model(id: 123),
        via: apiEnvironment
    )

    let models: [Model] = try await networkService.requestModels(
        to: APIEndpoint.models,
        via: apiEnvironment
    )
    return (model, models)
}

/// The README's construction lines; compiled, never called (they name a real host and the
/// user's real credential store).
func readmeConstructionSamples() {
    let apiEnvironment = DefaultAPIEnvironment(
        baseURL: URL(string: "https://api.company.com")
    )
    let networkService = HTTPNetworkService()
    let keyChainAuthService = SystemKeyChainAuthService()
    _ = (apiEnvironment, networkService, keyChainAuthService)
}

@Suite("README samples")
struct ReadmeSampleTests {
    @Test("Sign in, save the token, fetch one model and a list, over real sockets")
    func basicUsage() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("POST", "/api/signIn") { request in
            request.jsonObject?["password"] as? String == "pass" ? .json(#"{"token":"tok-1"}"#) : .status(401)
        }
        server.route("GET", prefix: "/api/model/") { request in
            request.bearerToken == "tok-1"
                ? .json(#"{"id":\#(request.path.split(separator: "/").last ?? "0"),"property":"one"}"#) : .status(401)
        }
        server.route("GET", "/api/models") { request in
            request.bearerToken == "tok-1" ? .json(#"[{"id":1,"property":"a"},{"id":2,"property":"b"}]"#) : .status(401)
        }
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyChainAuthService = SystemKeyChainAuthService(
            fileStore: FileCredentialStore(directory: directory.appendingPathComponent("gentle-networking")))
        let networkService = HTTPNetworkService(
            transport: URLSessionTransport(session: makeIsolatedSession()), authService: keyChainAuthService)

        let (model, models) = try await readmeBasicUsage(
            networkService: networkService, apiEnvironment: DefaultAPIEnvironment(baseURL: server.baseURL),
            keyChainAuthService: keyChainAuthService)

        #expect(model == Model(id: 123, property: "one"))
        #expect(models.map(\.id) == [1, 2])
        let signIn = try #require(server.requests(path: "/api/signIn").first)
        #expect(signIn.header("Authorization") == nil, "signIn does not require auth")
        #expect(signIn.jsonObject?["username"] as? String == "user")
        #expect(server.requests(path: "/api/model/123").first?.header("Authorization") == "Bearer tok-1")
        #expect(server.requests(path: "/api/models").first?.header("Authorization") == "Bearer tok-1")
    }

    @Test("CannedResponseTransport sample")
    func cannedResponseSample() async throws {
        let transport = CannedResponseTransport(
            string: #"{"id": 1, "title": "Test"}"#,
            statusCode: 200
        )

        let networkService = HTTPNetworkService(transport: transport)

        struct Item: Decodable { let id: Int; let title: String }
        let item: Item = try await networkService.request(
            to: Endpoint(path: "/anything", method: .get), via: DefaultAPIEnvironment(baseURL: URL(string: "https://x"))
        )
        #expect(item.title == "Test")
    }

    @Test("CannedRoutesTransport sample")
    func cannedRoutesSample() async throws {
        let transport = CannedRoutesTransport(routes: [
            CannedRoute(
                pattern: RequestPattern(method: .get, path: "/api/models"),
                response: CannedResponse(string: #"[{"id": 1}]"#)
            ),
            CannedRoute(
                pattern: RequestPattern(method: .post, pathRegex: "^/api/model/\\d+$"),
                response: CannedResponse(string: #"{"success": true}"#)
            ),
        ])

        let networkService = HTTPNetworkService(transport: transport)

        struct Identified: Decodable { let id: Int }
        struct Success: Decodable { let success: Bool }
        let environment = DefaultAPIEnvironment(baseURL: URL(string: "https://api.company.com"))
        let list: [Identified] = try await networkService.requestModels(
            to: Endpoint(path: "/api/models", method: .get), via: environment)
        #expect(list.map(\.id) == [1])
        let result: Success = try await networkService.request(
            to: Endpoint(path: "/api/model/7", method: .post), via: environment)
        #expect(result.success)
    }
}
