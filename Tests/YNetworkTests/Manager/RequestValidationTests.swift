import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing
import YNetwork

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A header injection: a name with CR/LF, or an `Authorization` value with CR/LF.
enum HeaderAttack: String, CaseIterable, Sendable, CustomStringConvertible {
    case nameWithCRLF
    case authorizationValueWithCRLF

    var description: String { rawValue }

    var headers: HttpHeaders {
        switch self {
        case .nameWithCRLF: ["X-Note\r\nX-Injected: 1": "secret"]
        case .authorizationValueWithCRLF: ["Authorization": "Bearer secret\r\nX-Injected: 1"]
        }
    }

    /// How the error message shows the header's name.
    var shownName: String {
        switch self {
        case .nameWithCRLF: #"X-Note\r\nX-Injected"#
        case .authorizationValueWithCRLF: "Authorization"
        }
    }
}

/// Where the bad header comes from.
enum HeaderSource: String, CaseIterable, Sendable, CustomStringConvertible {
    case request
    case configuration

    var description: String { rawValue }
}

private struct Headed: NetworkRequest {
    let extraHeaders: HttpHeaders?
    var path: PathRepresentable { "h" }
    var headers: HttpHeaders? { extraHeaders }
}

@Suite("Request validation: headers are checked before they are set, and nothing is sent")
struct RequestValidationTests {
    /// The error is `.serialization` wrapping the core's `TransportError(.invalidRequest)`,
    /// naming the header and not showing its value.
    private func expectInvalidRequest(_ error: (any Error)?, attack: HeaderAttack) {
        guard case .serialization(let cause) = error as? YNetwork.NetworkError,
            let transport = cause as? TransportError
        else {
            Issue.record("expected NetworkError.serialization(TransportError), got \(String(describing: error))")
            return
        }
        #expect(transport.code == .invalidRequest)
        #expect(transport.message.contains(attack.shownName), "\(transport.message)")
        #expect(!transport.message.contains("secret"), "the message must not show the value: \(transport.message)")
    }

    @Test(
        "submit: a bad header fails with serialization(TransportError) and the server receives nothing",
        arguments: HeaderAttack.allCases, HeaderSource.allCases)
    func submit(attack: HeaderAttack, source: HeaderSource) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(nil, "/h") { _ in .status(204) }
        let manager = makeManager(server: server, headers: source == .configuration ? attack.headers : nil)
        var thrown: (any Error)?
        do {
            let _: EmptyNetworkResponse = try await manager.submit(
                Headed(extraHeaders: source == .request ? attack.headers : nil))
        } catch {
            thrown = error
        }
        expectInvalidRequest(thrown, attack: attack)
        #expect(server.receivedRequests.isEmpty)
        #expect(server.acceptedConnectionCount == 0, "no connection was even opened")
    }

    @Test(
        "submit: 300 header fields fail with serialization(TransportError(.invalidRequest)); nothing is sent",
        arguments: HeaderSource.allCases)
    func tooManyFields(source: HeaderSource) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(nil, "/h") { _ in .status(204) }
        var fields: HttpHeaders = [:]
        for index in 0..<300 { fields["X-F\(index)"] = "1" }
        let manager = makeManager(server: server, headers: source == .configuration ? fields : nil)
        var thrown: (any Error)?
        do {
            let _: EmptyNetworkResponse = try await manager.submit(
                Headed(extraHeaders: source == .request ? fields : nil))
        } catch {
            thrown = error
        }
        guard case .serialization(let cause) = thrown as? YNetwork.NetworkError,
            let transport = cause as? TransportError
        else {
            Issue.record("expected NetworkError.serialization(TransportError), got \(String(describing: thrown))")
            return
        }
        #expect(transport.code == .invalidRequest)
        #expect(transport.message.contains("RequestValidator.maxRequestHeaderFields"), "\(transport.message)")
        #expect(server.receivedRequests.isEmpty)
        #expect(server.acceptedConnectionCount == 0, "no connection was even opened")
    }

    @Test(
        "Downloads and uploads: a bad request header fails the same way before anything is sent",
        arguments: HeaderAttack.allCases)
    func transfers(attack: HeaderAttack) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(nil, "/h") { _ in .status(204) }
        let manager = makeManager(server: server)
        let request = Headed(extraHeaders: attack.headers)
        let download: Result<URL, any Error> = await withCheckedContinuation { continuation in
            manager.submitBackgroundDownload(request) { continuation.resume(returning: $0) }
        }
        let upload: Result<Data, any Error> = await withCheckedContinuation { continuation in
            manager.submitBackgroundUpload(request) { continuation.resume(returning: $0) }
        }
        for result in [download.map { _ in () }, upload.map { _ in () }] {
            guard case .failure(let error) = result else {
                Issue.record("expected a failure")
                continue
            }
            expectInvalidRequest(error, attack: attack)
        }
        #expect(server.receivedRequests.isEmpty)
        #expect(server.acceptedConnectionCount == 0, "no connection was even opened")
    }
}
