import Foundation
import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `URLProtocol` that answers requests from a queue of canned results, for tests: nothing
/// reaches the network. Register it in a session's `URLSessionConfiguration.protocolClasses`
/// (``URLProtocolStubNetworkEngine`` does), then queue results with `appendStub`.
///
/// ```swift
/// URLProtocolStub.appendStub(withJSONObject: ["id": 1], statusCode: 200)
/// let manager = NetworkManager()
/// manager.configure(with: NetworkManagerConfiguration(networkEngine: URLProtocolStubNetworkEngine()))
/// ```
///
/// As in Y-Network, every request takes the oldest queued result, whatever its URL; a
/// request with none left fails with ``NetworkError/invalidResponse``. The queue is shared by
/// the whole process (`URLProtocol` classes are registered by type), so tests that use it must
/// not run in parallel (XCTest runs them one at a time; mark a Swift Testing suite
/// `.serialized`), and should call ``reset()`` when done. The queue is behind a lock, so
/// appending from any thread or task is safe in Swift 6.
///
/// Not `Sendable`: Foundation declares `URLProtocol` non-`Sendable`, and its instances belong
/// to the loading system. Its static API, which tests call, needs no instance.
public final class URLProtocolStub: URLProtocol {
    /// The kind of transfer a result is meant for, as in Y-Network.
    ///
    /// Every kind is delivered the same way, the body in one piece. (Y-Network sent a download
    /// in several pieces; swift-corelibs-foundation keeps only the last piece a custom
    /// `URLProtocol` delivers to a completion-handler task, so the body would arrive truncated.)
    public enum TaskType: Sendable, Equatable {
        /// A data task.
        case data
        /// A download.
        case download
        /// An upload.
        case upload
    }

    /// One queued result.
    public struct Stub: @unchecked Sendable {
        // @unchecked: a stub is never mutated after it is queued; its response and error are
        // only handed to the URL loading system.

        /// The body and response to deliver, or the error to fail with.
        public let output: Result<(Data, URLResponse), any Error>
        /// How the body is delivered.
        public let type: TaskType
    }

    private static let queue = Locked<[Stub]>([])

    /// The results still queued, oldest first.
    public static var messages: [Stub] { queue.current }

    /// Queues a result: the body and response to deliver, or the error the request fails with.
    ///
    /// - Parameter type: `.data` by default.
    public static func appendStub(_ result: Result<(Data, URLResponse), any Error>, type: TaskType = .data) {
        queue.withLock { $0.append(Stub(output: result, type: type)) }
    }

    /// Queues `obj` serialized as JSON, with status `statusCode`.
    ///
    /// Queues nothing when `obj` is not a valid JSON object (as in Y-Network), so the request
    /// that would have taken it fails with ``NetworkError/invalidResponse``.
    public static func appendStub(withJSONObject obj: Any, statusCode: Int, type: TaskType = .data) {
        guard let data = makeData(withJSONObject: obj) else { return }
        appendStub(withData: data, statusCode: statusCode, type: type)
    }

    /// Queues `data` as the body, with status `statusCode`.
    ///
    /// Queues nothing when `statusCode` is not a valid HTTP status (`HTTPURLResponse` refuses
    /// it), as in Y-Network.
    public static func appendStub(withData data: Data, statusCode: Int, type: TaskType = .data) {
        guard let response = makeHTTPURLResponse(statusCode: statusCode, expectedLength: data.count) else { return }
        appendStub(.success((data, response)), type: type)
    }

    /// Empties the queue.
    public static func reset() {
        queue.withLock { $0.removeAll() }
    }

    /// `obj` as JSON, or `nil` when it is not a valid JSON object (it never traps).
    public static func makeData(withJSONObject obj: Any) -> Data? {
        guard JSONSerialization.isValidJSONObject(obj) else { return nil }
        return try? JSONSerialization.data(withJSONObject: obj)
    }

    /// A response for `https://any-url.com` with status `statusCode` and a `Content-Length` of
    /// `expectedLength` (0 by default), as in Y-Network.
    ///
    /// - Returns: `nil` when `HTTPURLResponse` refuses the status.
    public static func makeHTTPURLResponse(statusCode: Int, expectedLength: Int = 0) -> HTTPURLResponse? {
        guard let url = URL(string: "https://any-url.com") else { return nil }
        return HTTPURLResponse(
            url: url, statusCode: statusCode, httpVersion: nil, headerFields: ["Content-Length": "\(expectedLength)"])
    }

    /// `true`: every request of a session this protocol is registered in is stubbed.
    public override class func canInit(with request: URLRequest) -> Bool { true }

    /// The request itself.
    public override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    /// Delivers the oldest queued result, or fails with ``NetworkError/invalidResponse`` when
    /// the queue is empty.
    public override func startLoading() {
        let next = Self.queue.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        guard let next else {
            client?.urlProtocol(self, didFailWithError: NetworkError.invalidResponse)
            return
        }
        switch next.output {
        case .failure(let error):
            client?.urlProtocol(self, didFailWithError: error)
        case .success((let data, let stubbed)):
            client?.urlProtocol(
                self, didReceive: Self.answering(request, with: stubbed), cacheStoragePolicy: .notAllowed)
            client?.urlProtocol(self, didLoad: data)
            client?.urlProtocolDidFinishLoading(self)
        }
    }

    /// `response`, for `request`'s URL when it was made for the placeholder `https://any-url.com`
    /// (``makeHTTPURLResponse(statusCode:expectedLength:)``, ``appendStub(withData:statusCode:type:)``):
    /// a 401 that seems to come from another origin does not refresh a `SessionManager`'s
    /// credentials (a redirect there carried none), so Y-Network's stubbed refresh tests would
    /// see no refresh. A response made for another URL is delivered as it is.
    static func answering(_ request: URLRequest, with response: URLResponse) -> URLResponse {
        guard let http = response as? HTTPURLResponse, http.url?.absoluteString == "https://any-url.com",
            let url = request.url,
            let rebuilt = HTTPURLResponse(
                url: url, statusCode: http.statusCode, httpVersion: nil,
                headerFields: http.allHeaderFields.reduce(into: [String: String]()) { fields, field in
                    if let name = field.key as? String, let value = field.value as? String { fields[name] = value }
                })
        else { return response }
        return rebuilt
    }

    /// Nothing to stop: a stubbed result is delivered at once.
    public override func stopLoading() {}
}
