/// What ``NetworkServiceProtocol/requestVoid(to:via:)`` returns: the 2xx status that answered a
/// request whose body is ignored (a `DELETE` answered 204, a `PUT` answered 200).
///
/// The call is `@discardableResult`, so callers that only care whether it threw can ignore it.
public enum NetworkServiceEmptyResponseResult: Sendable, Hashable {
    /// The request succeeded with this 2xx status code.
    case success(code: Int)

    /// The status code, such as 204.
    public var statusCode: Int {
        switch self {
        case .success(let code): code
        }
    }
}
