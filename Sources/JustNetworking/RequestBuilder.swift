import GentleNetworking

/// A step that configures a `URLRequest`: takes one and returns it changed.
///
/// Combine steps with ``compose(_:)``; ``identity`` changes nothing.
public typealias RequestBuilder = @Sendable (URLRequest) -> URLRequest

/// Turns a response body into the response value; throws when the body does not fit.
public typealias RequestParser<T> = @Sendable (Data) throws -> T

/// The builder that returns its request unchanged: ``RequestFactory``'s default.
///
/// A `@Sendable` closure rather than a function (JustNetworking declares a function), so that
/// `requestBuilder: … = identity` raises no Sendable warning in code built in the Swift 5
/// language mode, where global functions are not inferred `@Sendable`. `identity(request)` works
/// the same.
public let identity: RequestBuilder = { $0 }

/// Combines builders into one that applies them left to right.
///
/// ```swift
/// let requestBuilder = compose(addURLParams(["years": "2015"]), addHeaders(["Authorization": "Bearer …"]))
/// ```
///
/// - Parameter builders: Applied in order, each to the result of the one before. None gives
///   ``identity``.
public func compose(_ builders: RequestBuilder...) -> RequestBuilder {
    { request in builders.reduce(request) { request, builder in builder(request) } }
}

/// A builder that sets one property of the request through a key path.
///
/// ```swift
/// set(to: \.cachePolicy, .reloadIgnoringCacheData)
/// ```
///
/// - Parameters:
///   - keyPath: The property to set, such as `\.cachePolicy` or `\.timeoutInterval`.
///   - value: Its new value; it replaces whatever the request held.
public func set<T: Sendable>(
    to keyPath: any WritableKeyPath<URLRequest, T> & Sendable, _ value: T
) -> RequestBuilder {
    { request in
        var request = request
        request[keyPath: keyPath] = value
        return request
    }
}

/// A builder that adds query items to the request's URL, keeping the ones it already has.
///
/// ```swift
/// addURLParams(["years": "2015"])  // https://h/user?page=2  ->  https://h/user?page=2&years=2015
/// ```
///
/// - The existing query is kept byte for byte; the new items follow it, sorted by name.
/// - Names and values are percent-encoded strictly: everything but RFC 3986 unreserved
///   characters (`&`, `=`, `+`, space and non-ASCII included) becomes `%XX`.
/// - A name already in the URL is not replaced: both items are sent.
/// - A fragment stays at the end. An empty dictionary, or a request without a URL, leaves the
///   request unchanged.
public func addURLParams(_ params: [String: String]) -> RequestBuilder {
    let encoded = params.sorted { $0.key < $1.key }
        .map {
            PercentEncoding.queryComponent($0.key) + "=" + PercentEncoding.queryComponent($0.value)
        }
        .joined(separator: "&")
    return { request in
        guard !encoded.isEmpty, let url = request.url else { return request }
        var text = url.absoluteString
        var fragment = ""
        if let hash = text.firstIndex(of: "#") {
            fragment = String(text[hash...])
            text = String(text[..<hash])
        }
        if !text.contains("?") {
            text += "?"
        } else if !text.hasSuffix("?") && !text.hasSuffix("&") {
            text += "&"
        }
        guard let merged = URL(string: text + encoded + fragment) else { return request }
        var request = request
        request.url = merged
        return request
    }
}

/// A builder that sets header fields on the request.
///
/// ```swift
/// addHeaders(["Authorization": "Bearer …"])
/// ```
///
/// - Each value replaces any value the request already has for that name, matched
///   case-insensitively as `URLRequest` does.
/// - Names are applied in sorted order, so when two names differ only in case, the value of the
///   one that sorts last wins. An empty dictionary leaves the request unchanged.
/// - Each header is checked before it is set: a name that is not an HTTP token or a value with
///   CR, LF or NUL is not set, and the request built by ``RequestFactory/makeURLRequest()``
///   (which both requesters use) then fails with ``JustNetworkingError/invalidRequest(reason:)``,
///   so nothing is sent. (``RequestFactory/urlRequest`` cannot fail: it simply lacks that header.)
public func addHeaders(_ headers: [String: String]) -> RequestBuilder {
    let sorted = headers.sorted { $0.key < $1.key }
    return { request in
        var request = request
        do throws(TransportError) {
            try RequestValidator.checkFieldsSize(headers, url: request.url)
        } catch {
            HeaderProblems.report(error.message)
            return request
        }
        for (name, value) in sorted {
            do throws(TransportError) {
                try RequestValidator.setHeader(value, named: name, on: &request)
            } catch {
                HeaderProblems.report(error.message)
            }
        }
        return request
    }
}

/// Collects the header problems the builders of one ``RequestFactory`` run report, so that a
/// builder (which cannot throw) can still make the request fail.
final class HeaderProblems: Sendable {
    @TaskLocal static var collector: HeaderProblems?

    private let messages = Locked<[String]>([])

    /// The first problem reported, if any.
    var first: String? { messages.current.first }

    /// Records `message` with the collector of the current build; without one (a builder called
    /// on its own) the header is just left out.
    static func report(_ message: String) {
        collector?.messages.withLock { $0.append(message) }
    }

    /// Runs `build` and returns its result with the first problem it reported.
    static func collecting<Value>(_ build: () -> Value) -> (Value, String?) {
        let problems = HeaderProblems()
        let value = $collector.withValue(problems) { build() }
        return (value, problems.first)
    }
}
