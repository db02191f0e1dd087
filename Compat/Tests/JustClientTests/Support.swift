import Foundation
import JustNetworking

#if COMPAT_SWIFT5
    @testable import JustClient5
#else
    @testable import JustClient
#endif

/// A requester that records what it is asked to send and answers with canned bytes, as the
/// tests of a JustNetworking app write one.
final class MockRequester: Requester {
    private let lock = NSLock()
    private var _sent: [URLRequest] = []
    let body: Data
    let failure: Error?

    init(json: String, failure: Error? = nil) {
        self.body = Data(json.utf8)
        self.failure = failure
    }

    var sent: [URLRequest] {
        lock.lock()
        defer { lock.unlock() }
        return _sent
    }

    #if swift(>=6)
        func execute<T: Request>(_ request: T, response: @escaping RequestResponse<T.Response>) {
            record(request)
            let body = body
            let failure = failure
            request.responseQueue.async {
                if let failure {
                    response(.failure(failure))
                    return
                }
                response(Result { try request.requestParser(body) })
            }
        }
    #else
        // Swift 5 code spells the callback out, without `@Sendable`.
        func execute<T: Request>(_ request: T, response: @escaping (Result<T.Response, Error>) -> Void) {
            record(request)
            request.responseQueue.async {
                if let failure = self.failure {
                    response(.failure(failure))
                    return
                }
                response(Result { try request.requestParser(self.body) })
            }
        }
    #endif

    private func record<T: Request>(_ request: T) {
        lock.lock()
        _sent.append(request.urlRequest)
        lock.unlock()
    }
}

/// A URLProtocol that answers every request with a canned response: how app tests run
/// `URLSession`'s requester without a server.
final class StubURLProtocol: URLProtocol {
    #if swift(>=6)
        nonisolated(unsafe) static var status = 200
        nonisolated(unsafe) static var body = Data()
    #else
        static var status = 200
        static var body = Data()
    #endif

    override class func canInit(with request: URLRequest) -> Bool {
        return true
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest {
        return request
    }

    override func startLoading() {
        guard let url = request.url,
            let response = HTTPURLResponse(
                url: url, statusCode: Self.status, httpVersion: "HTTP/1.1", headerFields: nil)
        else { return }
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: Self.body)
        client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}

    static func session() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [StubURLProtocol.self]
        return URLSession(configuration: configuration)
    }
}

let filmsJSON = #"{"count":2,"results":[{"title":"A New Hope","episode_id":4},{"title":"Zoë","episode_id":5}]}"#
