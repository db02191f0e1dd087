import Foundation

/// A ``NetworkRequest`` whose body is multipart form data: POST by default, with the
/// `multipart/form-data; boundary=…` content type and ``multipart`` as the body.
///
/// Bodies above ``MultipartBuilder/streamingThreshold`` (10 MiB) are streamed from a temporary
/// file, which is removed when the request completes.
public protocol MultipartRequest: NetworkRequest {
    /// The body's parts and boundary.
    var multipart: MultipartBuilder { get }
}

extension MultipartRequest {
    /// `.POST`.
    public var method: HttpMethod { .POST }
    /// `.multipart` with the builder's boundary.
    public var requestType: RequestContentType { .multipart(boundary: multipart.boundary) }
    /// The multipart builder.
    public var body: BodyBuilder? { multipart }
}
