import Foundation
import JustNetworking

/// The film endpoints, on the global base URL.
public enum FilmRouter: Router {
    case films
    case film(id: Int)
    case rate(id: Int)
    case remove(id: Int)

    public var route: Route {
        switch self {
        case .films:
            return Route(path: "films", method: .get)
        case .film(let id):
            return Route(path: "films/\(id)", method: .get)
        case .rate(let id):
            return Route(path: "films/\(id)/rating", method: .post)
        case .remove(let id):
            return Route(path: "/films/\(id)", method: .delete)
        }
    }
}

/// Assets live on another host: the router overrides `baseURL`.
public enum AssetRouter: Router {
    case poster(name: String)

    public var route: Route {
        switch self {
        case .poster(let name):
            return Route(path: "posters/\(name)", method: .get)
        }
    }

    public var baseURL: URL {
        return URL(string: "https://cdn.example.com/v2")!
    }
}

/// A health check whose whole URL is fixed: the router overrides `completeURL`.
public struct HealthRouter: Router {
    public init() {}

    public var route: Route {
        return Route(path: "", method: .option)
    }

    public var completeURL: URL {
        return URL(string: "https://status.example.com/health")!
    }
}

/// Sets the API's base URL, as an app does at launch.
public func configureFilmAPI(baseURL: URL) {
    NetworkConfiguration.setCurrentURL(baseURL)
}

/// What the 1.x name of the configuration holds.
public func configuredBaseURL() -> URL? {
    return GlobalConfiguration.shared.url ?? NetworkConfiguration.shared.currentURL
}

/// A log line for a router: its method token and description.
public func describe(_ router: Router) -> String {
    return "\(router.method.value) \(router.completeURL.absoluteString) (\(router))"
}
