// A to-do client, written the way GentleNetworking's users write one: an endpoint enum, an
// environment, a repository over `NetworkServiceProtocol`, and a transport stack.
import Foundation
import GentleNetworking

/// A to-do item.
public struct Todo: Codable, Equatable, Sendable {
    public let id: Int
    public let title: String
    public let done: Bool

    public init(id: Int, title: String, done: Bool) {
        self.id = id
        self.title = title
        self.done = done
    }
}

/// The API's endpoints.
public enum TodoEndpoint: EndpointProtocol {
    case list(page: Int)
    case todo(id: Int)
    case create(title: String)
    case complete(id: Int)
    case delete(id: Int)

    public var path: String {
        switch self {
        case .list, .create:
            return "/todos"
        case .todo(let id), .complete(let id), .delete(let id):
            return "/todos/\(id)"
        }
    }

    public var method: HTTPMethod {
        switch self {
        case .list, .todo: return .get
        case .create: return .post
        case .complete: return .patch
        case .delete: return .delete
        }
    }

    public var query: [URLQueryItem]? {
        if case .list(let page) = self {
            return [URLQueryItem(name: "page", value: String(page))]
        }
        return nil
    }

    public var body: [String: EndpointAnyEncodable]? {
        switch self {
        case .create(let title):
            return ["title": EndpointAnyEncodable(title), "done": EndpointAnyEncodable(false)]
        case .complete:
            return ["done": EndpointAnyEncodable(true)]
        default:
            return nil
        }
    }

    public var requiresAuth: Bool {
        switch self {
        case .list, .todo: return false
        default: return true
        }
    }
}

/// The production environment.
public let productionEnvironment = DefaultAPIEnvironment(baseURL: URL(string: "https://api.example.com/v1"))

/// An ad-hoc endpoint.
public let healthEndpoint = Endpoint(path: "/health", method: .get)

/// An ad-hoc endpoint with every argument.
public func searchEndpoint(_ text: String) -> Endpoint {
    return Endpoint(
        path: "/search", method: .post, query: [URLQueryItem(name: "lang", value: "en")],
        body: ["text": EndpointAnyEncodable(text), "limit": EndpointAnyEncodable(10)], requiresAuth: true)
}
