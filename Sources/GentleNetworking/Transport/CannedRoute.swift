/// A canned response paired with the requests it answers.
public struct CannedRoute: Sendable {
    /// Which requests this route answers.
    public let pattern: RequestPattern
    /// The response returned for them.
    public let response: CannedResponse

    /// Creates a route. (The seed library forgot to make this public.)
    public init(pattern: RequestPattern, response: CannedResponse) {
        self.pattern = pattern
        self.response = response
    }
}
