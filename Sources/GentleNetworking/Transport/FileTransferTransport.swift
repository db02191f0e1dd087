import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport that can move request and response bodies to and from files with constant
/// memory, reporting progress: ``CurlTransport`` on Linux.
///
/// Decorators such as ``RetryTransport`` do not conform: they only see `data(for:)`.
public protocol FileTransferTransport: HTTPTransportProtocol {
    /// Downloads the response body of `request` into `destination` (replaced if present), and
    /// returns the final response; a failed transfer leaves no partial file there.
    func download(
        for request: URLRequest, to destination: URL, progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> HTTPURLResponse

    /// Sends the contents of `file` as the body of `request`, reading it as the upload proceeds,
    /// and returns the response body and response.
    func upload(
        for request: URLRequest, fromFile file: URL, progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> (Data, HTTPURLResponse)
}

extension DefaultTransport {
    /// The platform's default file-transfer transport: the shared ``CurlTransport`` on Linux,
    /// `nil` where there is none (Apple platforms use a background `URLSession` for this).
    public static func makeFileTransfer() -> (any FileTransferTransport)? {
        #if canImport(CCurl)
            return CurlTransport.shared
        #else
            return nil
        #endif
    }
}
