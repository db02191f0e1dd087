import Foundation
import GentleNetworking
import GentleNetworkingTesting
import JustNetworking
import Testing
import YNetwork

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A few faults of the fault table through each public API: `HTTPNetworkService`,
/// JustNetworking's `TransportRequester` and YNetwork's `NetworkManager`, over both transports.
/// Each must surface as that API's own typed error, the same on every transport.
@Suite("The fault table through the service and both compatibility modules", .serialized)
struct CompatibilityFaultTests {
    enum API: String, CaseIterable {
        case service = "`HTTPNetworkService`"
        case just = "JustNetworking"
        case yNetwork = "YNetwork"
    }

    struct Case {
        let name: String
        let behavior: HostileBehavior
        let expected: [API: String]
    }

    static let cases = [
        Case(
            name: "Reset mid-body", behavior: .resetMidBody(bodyLength: 200_000),
            expected: [
                .service: "transport(.connectionLost)", .just: "TransportError.connectionLost", .yNetwork: "noInternet",
            ]),
        Case(
            name: "Endless body (limit 1 MiB)", behavior: .endlessBody(chunked: true),
            expected: [
                .service: "transport(.responseTooLarge)", .just: "TransportError.responseTooLarge",
                .yNetwork: "TransportError.responseTooLarge",
            ]),
        Case(
            name: "Two different `Content-Length` fields",
            behavior: .conflictingContentLength(first: 2, second: 5, body: Data("ok".utf8)),
            expected: [
                .service: "transport(.badResponse)", .just: "TransportError.badResponse",
                .yNetwork: "TransportError.badResponse",
            ]),
        Case(
            name: "401 with `WWW-Authenticate: Basic`", behavior: .challenge(body: Data("denied".utf8)),
            expected: [
                .service: "httpStatusError(.unauthorized)", .just: "unacceptableStatusCode(401)",
                .yNetwork: "unauthenticated",
            ]),
        Case(
            name: "Redirect loop", behavior: .redirect(location: "/fault"),
            expected: [
                .service: "transport(.tooManyRedirects)", .just: "TransportError.tooManyRedirects",
                .yNetwork: "TransportError.tooManyRedirects",
            ]),
    ]

    @Test("Each API surfaces each fault as its own typed error, the same on every transport")
    func compatibilityTable() async throws {
        var lines = [
            "| Fault (both transports) | " + API.allCases.map(\.rawValue).joined(separator: " | ") + " |",
            "|---|" + String(repeating: "---|", count: API.allCases.count),
        ]
        for faultCase in Self.cases {
            var cells: [API: Set<String>] = [:]
            for kind in TransportKind.all {
                for api in API.allCases {
                    let server = try HostileServer()
                    defer { server.shutdown() }
                    server.route("/fault", faultCase.behavior)
                    let transport = try makeHostileTransport(kind, limits: FaultCatalog.smallLimits)
                    let outcome = try await withTimeLimit(FaultTableTests.caseTimeLimit) {
                        await Self.outcome(of: api, server: server, transport: transport)
                    }
                    cells[api, default: []].insert(outcome)
                    #expect(outcome == faultCase.expected[api], "\(faultCase.name), \(api) on \(kind)")
                }
            }
            lines.append(
                "| \(faultCase.name) | "
                    + API.allCases.map { api in
                        (cells[api] ?? []).sorted().map { "`\($0)`" }.joined(separator: " / ")
                    }.joined(separator: " | ") + " |")
        }
        FaultReport.publish(lines.joined(separator: "\n"))
    }

    /// What `api` ends with for `GET /fault` on `server`, described.
    static func outcome(of api: API, server: HostileServer, transport: any HTTPTransportProtocol) async -> String {
        switch api {
        case .service:
            let service = HTTPNetworkService(transport: transport)
            do {
                try await service.requestVoid(
                    to: Endpoint(path: "/fault", method: .get), via: DefaultAPIEnvironment(baseURL: server.baseURL))
                return "success"
            } catch let error as GentleNetworking.NetworkError {
                switch error.kind {
                case .transport(let code): return "transport(.\(code))"
                case .httpStatusError(let status): return "httpStatusError(.\(status))"
                default: return "\(error.kind)"
                }
            } catch {
                return "\(type(of: error))"
            }
        case .just:
            let requester = TransportRequester(transport: transport)
            let request = RequestType<Void>(
                requestFactory: RequestFactory(router: FaultRouter(baseURL: server.baseURL)))
            let result = await withCheckedContinuation { continuation in
                requester.execute(request) { continuation.resume(returning: $0) }
            }
            switch result {
            case .success: return "success"
            case .failure(let error as TransportError): return "TransportError.\(error.code)"
            case .failure(JustNetworkingError.unacceptableStatusCode(let status, _, _)):
                return "unacceptableStatusCode(\(status))"
            case .failure(let error): return "\(error)"
            }
        case .yNetwork:
            let manager = NetworkManager()
            manager.configure(
                with: NetworkManagerConfiguration(
                    basePath: server.baseURL.absoluteString, networkEngine: URLNetworkEngine(transport: transport)))
            do {
                let _: EmptyNetworkResponse = try await manager.submit(FaultRequest())
                return "success"
            } catch let error as TransportError {
                return "TransportError.\(error.code)"
            } catch let error as YNetwork.NetworkError {
                switch error {
                case .noInternet: return "noInternet"
                case .invalidSSL: return "invalidSSL"
                case .unauthenticated: return "unauthenticated"
                default: return "\(error)"
                }
            } catch let error as HttpError {
                return "HttpError(\(error.statusCode))"
            } catch {
                return "\(type(of: error)): \(error)"
            }
        }
    }
}

/// JustNetworking's route to `/fault`.
private struct FaultRouter: Router {
    let baseURL: URL
    var route: Route { Route(path: "fault", method: .get) }
}

/// YNetwork's request for `/fault`.
private struct FaultRequest: NetworkRequest {
    var path: PathRepresentable = "fault"
    var method: HttpMethod = .GET
    var headers: HttpHeaders? = nil
    var requestType: RequestContentType = .JSON
    var responseType: ResponseContentType = .JSON
    var body: BodyBuilder? = nil
    var timeoutInterval: TimeInterval = 0
    var cachePolicy: URLRequest.CachePolicy? = nil
}
