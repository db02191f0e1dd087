import Foundation
import JustNetworking

public typealias Token = String

/// Adds the bearer token.
public func addSecurity(_ token: Token) -> RequestBuilder {
    return addHeaders(["Authorization": "Bearer \(token)"])
}

/// A builder of the app's own: a JSON body and its content type.
public func addJSONBody<Body: Encodable>(_ body: Body, encoder: JSONEncoder = JSONEncoder()) -> RequestBuilder {
    let data = try? encoder.encode(body)
    return { request in
        var request = request
        request.httpBody = data
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        return request
    }
}

/// The identity builder of the app's own, as JustNetworking's tests wrote it.
public func requestIdentity(_ request: URLRequest) -> URLRequest {
    return request
}

/// The request settings the app applies to every call.
public let defaultSettings: RequestBuilder = compose(
    set(to: \.timeoutInterval, 15),
    set(to: \.cachePolicy, .reloadIgnoringLocalCacheData),
    addHeaders(["Accept": "application/json"])
)

#if swift(>=6)
    /// Query parameters of any value, as strings. In the Swift 6 mode a builder is a `@Sendable`
    /// closure, so it captures the strings, not the `[String: Any]`.
    public func addQuery(_ parameters: [String: Any]) -> RequestBuilder {
        let strings = parameters.mapValues { "\($0)" }
        return addURLParams(strings)
    }
#else
    /// Query parameters of any value: the builder captures the `[String: Any]` itself, as Swift 5
    /// code does.
    public func addQuery(_ parameters: [String: Any]) -> RequestBuilder {
        return { request in
            let strings = parameters.mapValues { "\($0)" }
            return addURLParams(strings)(request)
        }
    }
#endif

#if swift(>=6)
    /// A builder from a stored key path and value. (Swift 6: the value and the key path are
    /// `Sendable`, as the builder is.)
    public func setting<Value: Sendable>(
        _ keyPath: any WritableKeyPath<URLRequest, Value> & Sendable, to value: Value
    ) -> RequestBuilder {
        return set(to: keyPath, value)
    }
#else
    /// A builder from a stored key path and value, as generic Swift 5 code writes it.
    public func setting<Value>(_ keyPath: WritableKeyPath<URLRequest, Value>, to value: Value) -> RequestBuilder {
        return set(to: keyPath, value)
    }
#endif
