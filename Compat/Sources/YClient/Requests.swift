// A profile client, written the way Y-Network's users write one: request structs with defaults,
// a path enum, a session manager, and a NetworkManager subclass that peeks at results.
import Foundation
import YNetwork

/// A user profile.
public struct Profile: Codable, Equatable {
    public let id: String
    public let name: String

    public init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}

/// The API's paths.
public enum ProfilePath: String, PathRepresentable {
    case profiles = "/profiles"
    case avatar = "/profiles/avatar"
    case login = "/auth/login"
}

/// Lists profiles: path only, everything else defaulted.
public struct GetProfilesRequest: NetworkRequest {
    public let page: Int

    public init(page: Int) {
        self.page = page
    }

    public var path: PathRepresentable { return ProfilePath.profiles }
    public var queryParameters: ParametersBuilder? { return ["page": page, "verbose": true, "q": "a b"] }
}

/// Updates a profile with a JSON body.
public struct UpdateProfileRequest: NetworkRequest {
    public let profile: Profile

    public init(profile: Profile) {
        self.profile = profile
    }

    public var basePath: PathRepresentable? { return "https://edit.example.com/api/" }
    public var path: PathRepresentable { return "profiles/\(profile.id)" }
    public var method: HttpMethod { return .PUT }
    public var headers: HttpHeaders? { return ["X-Client": "compat"] }
    public var body: BodyBuilder? { return profile }
    public var timeoutInterval: TimeInterval { return 12 }
    public var cachePolicy: URLRequest.CachePolicy? { return .reloadIgnoringLocalCacheData }
}

extension Profile: BodyBuilder {}

/// Logs in with a form body, without the session.
public struct LoginRequest: NetworkRequest {
    public let user: String

    public init(user: String) {
        self.user = user
    }

    public var path: PathRepresentable { return ProfilePath.login }
    public var method: HttpMethod { return .POST }
    public var requestType: RequestContentType { return .formURLEncoded }
    public var body: BodyBuilder? { return Data("user=\(user)".utf8) }
    public var responseType: ResponseContentType { return .none }
    public var usesSession: Bool { return false }
}

/// Uploads an avatar as multipart form data.
public struct AvatarUploadRequest: MultipartRequest {
    public let image: Data

    public init(image: Data) {
        self.image = image
    }

    public var path: PathRepresentable { return ProfilePath.avatar }
    public var multipart: MultipartBuilder {
        return MultipartForm(
            parts: [
                "caption": .formField(value: "me"),
                "file": .file(info: MultipartFileInfo(fileName: "a.png", data: image, mimeType: "image/png")),
            ],
            boundary: "compat-boundary")
    }
}

/// The app's configuration.
public func makeConfiguration(basePath: String) -> NetworkManagerConfiguration {
    return NetworkManagerConfiguration(
        basePath: basePath, headers: ["Accept-Language": "en"], parserFactory: JSONDataParserFactory(),
        timeoutInterval: 30, cachePolicy: .useProtocolCachePolicy)
}
