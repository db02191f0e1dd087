// Pending: needs MockNetworkService, MockKeyChainStore and the pending client files.
import Foundation
import GentleNetworking
import Testing

#if COMPAT_SWIFT5
    @testable import GentleClient5
#else
    @testable import GentleClient
#endif

@Suite struct MockServiceTests {
    @Test func repositoryOverAMockService() async throws {
        let service = MockNetworkService(responseJSON: #"[{"id":1,"title":"a","done":false}]"#)
        let todos = try await TodoRepository(service: service).todos(page: 1)
        #expect(todos.count == 1)
    }

    @Test func mockServiceWithLatency() async throws {
        let service = MockNetworkService(
            data: Data(#"{"id":1,"title":"a","done":true}"#.utf8), jsonDecoder: JSONDecoder(),
            duration: .milliseconds(5), clock: ContinuousClock())
        #expect(try await TodoRepository(service: service).todo(id: 1).done)
    }

    @Test func keychainAuthWithAMockStore() async throws {
        let store = MockKeyChainStore()
        let auth = SessionAuthService(keyChainStore: store)
        try await auth.saveAccessToken("s-1")
        #expect(try await store.value(forKey: "sessionToken") == "s-1")
        let request = try await auth.authorize(URLRequest(url: URL(string: "https://api.example.com")!))
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer s-1")
    }

    @Test func errorsByCase() {
        #expect(message(for: .httpStatusError(.notFound)) == "HTTP 404")
        #expect(message(for: .invalidResponseType) == "not HTTP")
        #expect(needsLogin(NetworkError.httpStatusError(.unauthorized)))
        #expect(isStubMiss(CannedRoutesTransport.Error.noMatch))
    }

    @Test func environmentAndPreview() throws {
        #expect(StagingEnvironment(region: "eu")._baseURL?.host == "eu.staging.example.com")
        #expect(try previewRequest().httpMethod == "POST")
    }
}
