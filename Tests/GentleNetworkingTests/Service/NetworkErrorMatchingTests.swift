import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

/// Seed code matches ``NetworkError`` as an enum of two cases; the context our errors carry
/// must survive it. Status errors come from a real server.
@Suite("NetworkError: the seed's patterns, with the context kept")
struct NetworkErrorMatchingTests {
    /// Sends GET `path` to a loopback server that answers `status` with a JSON error body.
    func failure(status: Int, path: String = "/orders/7") async throws -> NetworkError {
        let harness = try LoopbackHarness()
        defer { harness.server.shutdown() }
        harness.server.route("GET", path) { _ in
            LoopbackResponse(
                status: status, headers: [("Content-Type", "application/json"), ("X-Request-Id", "r-\(status)")],
                body: Data(#"{"error":"nope"}"#.utf8))
        }
        do {
            try await harness.service.requestVoid(to: Endpoint(path: path, method: .get), via: harness.environment)
        } catch let error as NetworkError {
            #expect(harness.server.receivedRequests.count == 1)
            return error
        }
        Issue.record("HTTP \(status) did not throw")
        return .invalidResponseType
    }

    /// What a seed user's exhaustive switch sees.
    func seedBranch(_ error: NetworkError) -> String {
        switch error {
        case .invalidResponseType: "invalid"
        case .httpStatusError(let status): "status \(status.statusCode)"
        }
    }

    @Test("if case .httpStatusError(let status) binds the status, with the server's headers and body")
    func ifCaseBindsStatus() async throws {
        let error = try await failure(status: 422)
        guard case .httpStatusError(let status) = error else {
            Issue.record("not a status error: \(error)")
            return
        }
        #expect(status == .clientError(422))
        #expect(status.statusCode == 422)
        #expect(status.error == .clientError(422))
        #expect(status.response?.header("x-request-id") == "r-422")
        #expect(status.response?.bodyText == #"{"error":"nope"}"#)
        #expect(status.message.contains("HTTP 422"))
        // The same context through the kind API.
        #expect(error.kind == .httpStatusError(.clientError(422)))
        #expect(error.response?.statusCode == 422)
        #expect(error.statusError == .clientError(422))
        #expect(seedBranch(error) == "status 422")
    }

    @Test("Named statuses match by value; a switch over the status works with and without bindings")
    func namedStatuses() async throws {
        for (code, expected) in [(401, "unauthorized"), (404, "notFound"), (429, "rateLimited"), (503, "unavailable")] {
            let error = try await failure(status: code)
            guard case .httpStatusError(let status) = error else {
                Issue.record("\(code): not a status error")
                continue
            }
            let name: String
            switch status {
            case .unauthorized: name = "unauthorized"
            case .notFound: name = "notFound"
            case .rateLimited: name = "rateLimited"
            case .serviceUnavailable: name = "unavailable"
            default: name = "other"
            }
            #expect(name == expected, "\(code)")
            // Exhaustive, binding the code: over the plain HTTPStatusError.
            switch status.error {
            case .unauthorized, .forbidden, .notFound, .rateLimited, .internalServerError, .serviceUnavailable: break
            case .clientError(let other), .serverError(let other), .redirect(let other):
                Issue.record("\(code) categorized as \(other)")
            }
        }
    }

    @Test("catch NetworkError.httpStatusError(.x) catches only that status")
    func catchClauses() async throws {
        let harness = try LoopbackHarness()
        defer { harness.server.shutdown() }
        harness.server.route("GET", "/gone") { _ in .text("", status: 404) }
        var caught = ""
        do {
            try await harness.service.requestVoid(to: Endpoint(path: "/gone", method: .get), via: harness.environment)
        } catch NetworkError.httpStatusError(.unauthorized) {
            caught = "401"
        } catch NetworkError.httpStatusError(.notFound) {
            caught = "404"
        } catch NetworkError.invalidResponseType {
            caught = "invalid"
        }
        #expect(caught == "404")
    }

    @Test("A transport failure is .invalidResponseType in a seed switch, with its kind and underlying error")
    func transportFailureIsInvalidResponseType() async throws {
        let refusing = try RefusingPort()
        defer { withExtendedLifetime(refusing) {} }  // refusing until the end
        let base = refusing.baseURL
        for kind in TransportKind.all {
            let service = HTTPNetworkService(transport: try kind.make(), authService: InMemoryAuthService())
            do {
                try await service.requestVoid(
                    to: Endpoint(path: "/x", method: .get), via: DefaultAPIEnvironment(baseURL: base))
                Issue.record("\(kind): a closed port answered")
            } catch let error as NetworkError {
                #expect(seedBranch(error) == "invalid", "\(kind)")
                guard case .invalidResponseType(let details) = error else {
                    Issue.record("\(kind): not invalidResponseType: \(error)")
                    continue
                }
                #expect(details.kind == .transport(.cannotConnect), "\(kind)")
                #expect(error.kind == .transport(.cannotConnect), "\(kind)")
                #expect(error.underlyingError is TransportError, "\(kind)")
                #expect(error.url?.path == "/x", "\(kind)")
            }
        }
    }

    @Test("A decoding failure is .invalidResponseType with where it failed and the response")
    func decodingFailureKeepsContext() async throws {
        let transport = CannedResponseTransport(string: #"{"id":"seven"}"#, statusCode: 200)
        struct Order: Decodable { let id: Int }
        do {
            let _: Order = try await HTTPNetworkService(transport: transport, authService: InMemoryAuthService())
                .request(
                    to: Endpoint(path: "/o", method: .get),
                    via: DefaultAPIEnvironment(baseURL: URL(string: "https://a.example")))
            Issue.record("decoded a string as an Int")
        } catch let error as NetworkError {
            #expect(seedBranch(error) == "invalid")
            #expect(error.kind == .decodingFailed)
            #expect(error.decodingFailure?.codingPath == "id")
            #expect(error.response?.statusCode == 200)
            #expect(error.underlyingError is DecodingError)
        }
    }

    @Test("The seed's values: NetworkError.invalidResponseType and .httpStatusError(.notFound) build errors")
    func seedValues() {
        let invalid: any Error = NetworkError.invalidResponseType
        let notFound: any Error = NetworkError.httpStatusError(.notFound)
        #expect((invalid as? NetworkError)?.kind == .invalidResponseType)
        #expect((notFound as? NetworkError)?.kind == .httpStatusError(.notFound))
        #expect((notFound as? NetworkError)?.response == nil)
        if case NetworkError.httpStatusError(.forbidden) = notFound { Issue.record("403 matched a 404") }
        // The kind API builds the same cases.
        guard case .httpStatusError(let status) = NetworkError(.httpStatusError(.rateLimited), message: "slow down")
        else {
            Issue.record("a status kind built another case")
            return
        }
        #expect(status == .rateLimited && status.message == "slow down")
        guard case .invalidResponseType(let details) = NetworkError(.missingBaseURL, message: "none") else {
            Issue.record("missingBaseURL built a status error")
            return
        }
        #expect(details.kind == .missingBaseURL)
    }

    @Test("HTTPStatusFailure compares and hashes by status only, like HTTPStatusError")
    func failureEquality() {
        let bare = HTTPStatusFailure(.notFound)
        let detailed = HTTPStatusFailure(
            .notFound, details: NetworkError.Details(kind: .httpStatusError(.notFound), message: "HTTP 404 from GET /x")
        )
        #expect(bare == detailed)
        #expect(Set([bare, detailed]).count == 1)
        #expect(HTTPStatusFailure.clientError(401) != .unauthorized)
        #expect(HTTPStatusFailure.serverError(502).statusCode == 502)
        #expect(HTTPStatusFailure.redirect(304).error == .redirect(304))
    }
}
