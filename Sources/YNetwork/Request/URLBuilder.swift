import Foundation
import GentleNetworking

/// Builds the URL of a ``NetworkRequest``.
///
/// - A path that starts with `http://` or `https://` (any case) is absolute and used as it is.
/// - Otherwise the base is the request's ``NetworkRequest/basePath``, else the configuration's,
///   joined to the path with exactly one `/`; characters a path cannot hold are
///   percent-encoded. No base at all is ``NetworkError/noBasePath``.
/// - Query parameters are percent-encoded, written `key=value`, sorted and joined with `&`;
///   `true` is a bare key, `false` and `nil` are left out, arrays repeat their key. They are
///   appended with `?`, or `&` when the path already has a query. With a `.formURLEncoded`
///   request type, spaces are written `+`.
/// - Text that still does not parse as a URL is ``NetworkError/invalidURL``.
public struct URLBuilder: Sendable {
    /// Creates a builder.
    public init() {}

    /// The path joined to its base, without the query.
    ///
    /// - Throws: ``NetworkError/noBasePath`` for a relative path with no base.
    public func path(for request: NetworkRequest, configuration: NetworkManagerConfiguration?) throws -> String {
        let path = request.path.pathValue
        if path.isAbsoluteURLPath { return path }
        guard let base = (request.basePath ?? configuration?.basePath)?.pathValue else {
            throw NetworkError.noBasePath
        }
        var trimmedBase = Substring(base)
        while trimmedBase.hasSuffix("/") { trimmedBase.removeLast() }
        // Characters a path cannot hold (spaces, non-ASCII) are percent-encoded; existing escapes
        // stay, and a query already in the path is kept as it is.
        let relative = path.drop { $0 == "/" }
        let queryStart = relative.firstIndex(of: "?") ?? relative.endIndex
        let trimmedPath =
            PercentEncoding.path(String(relative[..<queryStart])) + relative[queryStart...]
        return trimmedPath.isEmpty ? String(trimmedBase) : trimmedBase + "/" + trimmedPath
    }

    /// The full URL of `request`.
    ///
    /// - Throws: ``NetworkError/noBasePath`` or ``NetworkError/invalidURL``.
    public func url(for request: NetworkRequest, configuration: NetworkManagerConfiguration?) throws -> URL {
        var text = try path(for: request, configuration: configuration)
        if let parameters = request.queryParameters?.parameters, !parameters.isEmpty {
            let query = queryString(with: parameters, contentType: request.requestType)
            if !query.isEmpty { text += (text.contains("?") ? "&" : "?") + query }
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host?.isEmpty == false
        else {
            throw NetworkError.invalidURL
        }
        return url
    }

    /// `parameters` as a sorted, percent-encoded query (spaces as `+` for `.formURLEncoded`).
    public func queryString(with parameters: Parameters, contentType: RequestContentType) -> String {
        FormURLEncoder.encode(parameters, spaceAsPlus: contentType == .formURLEncoded)
    }
}

extension String {
    /// Whether this is an absolute `http://` or `https://` URL (any case).
    public var isAbsoluteURLPath: Bool {
        let lowered = prefix(8).lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    }
}
