import Foundation
import GentleNetworking
import GentleNetworkingTesting
import JustNetworking
import Testing

/// A URLSession with no cache, cookies or credential sharing, so tests cannot affect each other.
func makeIsolatedSession() -> URLSession {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpCookieStorage = nil
    configuration.urlCache = nil
    configuration.timeoutIntervalForRequest = 30
    return URLSession(configuration: configuration)
}

/// The two requesters the library ships; on-the-wire tests run once with each.
enum RequesterKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case urlSession
    case transport

    var description: String { rawValue }

    /// A fresh requester of this kind (the transport one over the platform's default transport).
    func make() -> any Requester {
        switch self {
        case .urlSession: makeIsolatedSession()
        case .transport: TransportRequester()
        }
    }
}

/// A router pointed at a given base URL (the loopback server), so that on-the-wire tests never
/// touch the global `NetworkConfiguration` and can run in parallel.
struct FixedBaseRouter: Router {
    let baseURL: URL
    let route: Route

    init(_ baseURL: URL, _ path: String, _ method: JustNetworking.HTTPMethod = .get) {
        self.baseURL = baseURL
        self.route = Route(path: path, method: method)
    }
}

/// A user as the test server sends it.
struct User: Codable, Sendable, Equatable {
    let id: String
    let name: String
}

/// An error a test parser throws, to check it arrives unchanged.
struct ParserFailure: Error, Equatable {
    let reason: String
}

/// A serial queue that can tell whether the current code runs on it.
final class MarkedQueue: Sendable {
    let queue: DispatchQueue
    private let key = DispatchSpecificKey<UInt8>()

    init(label: String = "justnetworking.tests.response") {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: key, value: 1)
    }

    /// Whether the calling code runs on ``queue``.
    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == 1 }
}

/// What a requester delivered, and whether the callback ran on the request's queue.
struct Delivery<Value: Sendable>: Sendable {
    let result: Result<Value, any Error>
    let onResponseQueue: Bool

    var value: Value? { try? result.get() }
    var error: (any Error)? {
        if case .failure(let error) = result { return error }
        return nil
    }
}

/// Runs `request` with `requester` and waits for its callback (a second callback would trap the
/// checked continuation, so "exactly once" is enforced too).
func deliver<T: Request>(
    _ request: T, via requester: any Requester, checking marked: MarkedQueue
) async -> Delivery<T.Response> where T.Response: Sendable {
    await withCheckedContinuation { continuation in
        requester.execute(request) { result in
            continuation.resume(returning: Delivery(result: result, onResponseQueue: marked.isCurrent))
        }
    }
}

extension Dictionary where Key == String, Value == String {
    /// The value of header `name`, compared case-insensitively.
    func header(_ name: String) -> String? {
        first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
