// A film catalogue client, written the way JustNetworking's users write one: routers per domain,
// `RequestType`s built from composed builders, and an app-side requester.
import Foundation
import JustNetworking

/// A film, as the API sends it (snake_case keys).
public struct Film: Decodable, Equatable {
    public let title: String
    public let episodeId: Int

    public init(title: String, episodeId: Int) {
        self.title = title
        self.episodeId = episodeId
    }
}

/// The API's list envelope.
public struct GenericResult<T: Decodable>: Decodable {
    public let count: Int
    public let results: [T]
}

/// A rating sent in a POST body.
public struct Rating: Encodable {
    public let stars: Int

    public init(stars: Int) {
        self.stars = stars
    }
}
