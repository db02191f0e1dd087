import Foundation
import GentleNetworking
import Testing

#if COMPAT_SWIFT5
    @testable import GentleClient5
#else
    @testable import GentleClient
#endif

/// A transport of the test's own that records requests and answers from another transport.
struct RecordingTransport: HTTPTransportProtocol {
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var requests: [URLRequest] = []

        func append(_ request: URLRequest) {
            lock.lock()
            requests.append(request)
            lock.unlock()
        }

        var all: [URLRequest] {
            lock.lock()
            defer { lock.unlock() }
            return requests
        }
    }

    let inner: any HTTPTransportProtocol
    let log = Log()

    func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        log.append(request)
        return try await inner.data(for: request)
    }
}

let todosJSON = #"[{"id":1,"title":"Milk","done":false},{"id":2,"title":"Zoë","done":true}]"#

func cannedRoutes() -> CannedRoutesTransport {
    return CannedRoutesTransport(
        routes: [
            CannedRoute(
                pattern: RequestPattern(method: .get, path: "/v1/todos"),
                response: CannedResponse(string: todosJSON, headerFields: ["Content-Type": "application/json"])),
            CannedRoute(
                pattern: RequestPattern(method: .get, pathRegex: "^/v1/todos/1$"),
                response: CannedResponse(data: Data(#"{"id":1,"title":"Milk","done":false}"#.utf8))),
            CannedRoute(
                pattern: RequestPattern(method: .get, host: "api.example.com", path: "/v1/todos/9"),
                response: CannedResponse(string: #"{"error":"gone"}"#, statusCode: 404)),
            CannedRoute(
                pattern: RequestPattern(method: .post, hostRegex: "^api\\.example\\.com$", pathRegex: "^/v1/todos$"),
                response: CannedResponse(string: #"{"id":3,"title":"New","done":false}"#, statusCode: 201)),
            CannedRoute(
                pattern: RequestPattern(method: .delete, path: "/v1/todos/1"),
                response: CannedResponse(string: "", statusCode: 204)),
        ],
        mode: .requireUniqueMatch)
}

@Suite struct TodoRepositoryTests {
    let recording = RecordingTransport(inner: cannedRoutes())

    func repository() -> TodoRepository {
        let service = HTTPNetworkService(transport: recording, authService: APIKeyAuthService(key: "k-1"))
        return TodoRepository(service: service)
    }

    @Test func listsDecodeATopLevelArray() async throws {
        let todos = try await repository().todos(page: 2)
        #expect(todos == [Todo(id: 1, title: "Milk", done: false), Todo(id: 2, title: "Zoë", done: true)])
        #expect(recording.log.all.first?.url?.query == "page=2")
        #expect(recording.log.all.first?.value(forHTTPHeaderField: "X-API-Key") == nil)
    }

    @Test func oneTodo() async throws {
        #expect(try await repository().todo(id: 1) == Todo(id: 1, title: "Milk", done: false))
    }

    @Test func createSendsTheBodyAndTheKey() async throws {
        let created = try await repository().create(title: "New")
        #expect(created.id == 3)
        let request = try #require(recording.log.all.last)
        #expect(request.value(forHTTPHeaderField: "X-API-Key") == "k-1")
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
        let body = try #require(request.httpBody)
        let object = try JSONSerialization.jsonObject(with: body) as? [String: Any]
        #expect(object?["title"] as? String == "New")
    }

    @Test func deleteAnswersTheStatus() async throws {
        #expect(try await repository().delete(id: 1) == 204)
    }

    @Test func notFoundIsCaughtByPattern() async throws {
        #expect(await repository().isMissing(id: 9))
        #expect(await repository().isMissing(id: 1) == false)
    }

    @Test func unmatchedRequestsThrow() async {
        await #expect(throws: (any Error).self) {
            _ = try await repository().todos(page: 1) as [Todo]
            _ = try await repository().todo(id: 77)
        }
    }

    @Test func singleCannedResponse() async throws {
        let transport = CannedResponseTransport(string: #"{"id":5,"title":"x","done":true}"#, statusCode: 200)
        let service = HTTPNetworkService(transport: transport, authService: InMemoryAuthService())
        let todo: Todo = try await service.request(to: TodoEndpoint.todo(id: 5), via: productionEnvironment)
        #expect(todo.done)
        let other = CannedResponseTransport(cannedResponse: CannedResponse(string: "[]"))
        let none: [Todo] = try await HTTPNetworkService(transport: other, authService: InMemoryAuthService())
            .requestModels(to: healthEndpoint, via: DefaultAPIEnvironment(baseURL: URL(string: "https://h.example")))
        #expect(none.isEmpty)
    }

    @Test func statusErrors() {
        #expect(HTTPStatusError(statusCode: 429) == .rateLimited)
        #expect(HTTPStatusError(statusCode: 200) == nil)
        #expect(HTTPStatusError(statusCode: 418)?.statusCode == 418)
        #expect(loggedStatus(.serviceUnavailable) == "server down 503")
        #expect(loggedStatus(.clientError(418)) == "other 418")
    }

    @Test func authServiceAuthorizes() async throws {
        let auth = APIKeyAuthService()
        try await auth.saveAccessToken("abc")
        let request = try await auth.authorize(URLRequest(url: URL(string: "https://api.example.com")!))
        #expect(request.value(forHTTPHeaderField: "X-API-Key") == "abc")
        try await auth.deleteAccessToken()
        #expect(try await auth.loadAccessToken() == nil)
    }

    @Test func stacksBuild() {
        _ = TodoStack.makeService(auth: InMemoryAuthService(token: "t"))
        _ = TodoStack.patientTransport(URLSessionTransport())
        _ = TodoStack.pinnedTransport(keyHash: Data(count: 32), certificate: Data([0x30]))
        _ = searchEndpoint("q")
    }
}
