#if canImport(CCurl)
    import Foundation
    import GentleNetworking
    import GentleNetworkingTesting
    import Testing

    /// Over CurlTransport with no logger, `request`, `requestModels` and `requestVoid` skip
    /// building the HTTPURLResponse for a 2xx. With a logger they take the full path. Both must
    /// give the same results and the same errors, and send the same requests.
    @Suite("HTTPNetworkService over CurlTransport: the deferred-response path equals the full path")
    struct DeferredResponsePathTests {
        enum Path: String, CaseIterable, CustomStringConvertible {
            case deferred
            case full
            var description: String { rawValue }
        }

        func makeService(_ path: Path, transport: CurlTransport) -> HTTPNetworkService {
            let logger: any NetworkLogger = path == .full ? ClosureNetworkLogger { _ in } : NoOpNetworkLogger()
            return HTTPNetworkService(transport: transport, authService: InMemoryAuthService(), logger: logger)
        }

        func makeServer() throws -> LoopbackServer {
            let server = try LoopbackServer()
            server.route("GET", "/model") { _ in .json(#"{"id":1,"property":"a"}"#) }
            server.route("GET", "/models") { _ in .json(#"[{"id":1,"property":"a"},{"id":2,"property":"b"}]"#) }
            server.route("GET", "/moved") { _ in .redirect(to: "/model") }
            server.route("DELETE", "/model") { _ in .status(204) }
            server.route("GET", "/missing") { _ in
                .json(#"{"error":"nope"}"#, status: 404, headers: [("X-Request-Id", "abc")])
            }
            server.route("GET", "/teapot") { _ in .text("short and stout", status: 418) }
            server.route("GET", "/wrong") { _ in .json(#"{"id":"one","property":"a"}"#) }
            return server
        }

        @Test("Models, arrays, redirects and 204s come back the same", arguments: Path.allCases)
        func successes(path: Path) async throws {
            let server = try makeServer()
            defer { server.shutdown() }
            let service = makeService(path, transport: try CurlTransport())
            let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
            let model: Model = try await service.request(to: Endpoint(path: "/model", method: .get), via: environment)
            #expect(model == Model(id: 1, property: "a"))
            let models: [Model] = try await service.requestModels(
                to: Endpoint(path: "/models", method: .get), via: environment)
            #expect(models.map(\.id) == [1, 2])
            let redirected: Model = try await service.request(
                to: Endpoint(path: "/moved", method: .get), via: environment)
            #expect(redirected == model)
            try await service.requestVoid(to: Endpoint(path: "/model", method: .delete), via: environment)
            #expect(
                server.receivedRequests.map { "\($0.method) \($0.path)" } == [
                    "GET /model", "GET /models", "GET /moved", "GET /model", "DELETE /model",
                ])
        }

        @Test(
            "Status and decoding errors carry the same status, headers, body and coding path", arguments: Path.allCases)
        func failures(path: Path) async throws {
            let server = try makeServer()
            defer { server.shutdown() }
            let service = makeService(path, transport: try CurlTransport())
            let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
            func failure(_ endpoint: Endpoint) async -> NetworkError? {
                do {
                    let _: Model = try await service.request(to: endpoint, via: environment)
                    return nil
                } catch {
                    return error as? NetworkError
                }
            }
            let missing = try #require(await failure(Endpoint(path: "/missing", method: .get)))
            #expect(missing.response?.statusCode == 404)
            #expect(missing.response?.headers.first { $0.key.lowercased() == "x-request-id" }?.value == "abc")
            #expect(missing.response?.body == Data(#"{"error":"nope"}"#.utf8))
            #expect(missing.url == server.url("/missing"))
            let teapot = try #require(await failure(Endpoint(path: "/teapot", method: .get)))
            #expect(teapot.response?.statusCode == 418)
            #expect(teapot.response?.body == Data("short and stout".utf8))
            let wrong = try #require(await failure(Endpoint(path: "/wrong", method: .get)))
            #expect(wrong.decodingFailure?.codingPath == "id")
            #expect(wrong.decodingFailure?.statusCode == 200)
            #expect(wrong.response?.statusCode == 200)
            await #expect(throws: NetworkError.self) {
                try await service.requestVoid(to: Endpoint(path: "/missing", method: .get), via: environment)
            }
        }

        @Test("A refused connection is the same transport error on both paths", arguments: Path.allCases)
        func transportFailure(path: Path) async throws {
            let refusing = try RefusingPort()
            defer { withExtendedLifetime(refusing) {} }  // refusing until the end
            let environment = DefaultAPIEnvironment(baseURL: refusing.baseURL)
            let service = makeService(path, transport: try CurlTransport())
            do {
                let _: Model = try await service.request(to: Endpoint(path: "/model", method: .get), via: environment)
                Issue.record("A closed port must fail")
            } catch let error as NetworkError {
                #expect(error.kind == .transport(.cannotConnect))
            }
        }
    }
#endif
