import Foundation

/// The result of a request whose ``ResponseContentType`` is `.none`: there is nothing to parse.
public struct EmptyNetworkResponse: Decodable, Sendable, Equatable {
    /// Creates an empty response.
    public init() {}
}
