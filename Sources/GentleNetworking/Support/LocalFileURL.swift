import Foundation

extension URL {
    /// The path of this URL when it names a local file (a `file:` URL); `nil` for any other URL.
    ///
    /// Every API that reads or writes a file it is given by URL goes through this: the path of
    /// `https://cdn.example.com/home/me/.ssh/id_ed25519` names a resource on that host, and
    /// reading it as a local path would upload the caller's own file (or write a download over
    /// it) where a remote one was meant.
    package var localFilePath: String? {
        isFileURL ? path : nil
    }
}

extension TransportError {
    /// The error for a URL given as a file to read or write that is not a `file:` URL: nothing
    /// is sent, read or written.
    ///
    /// - Parameters:
    ///   - url: The URL given as the file (quoted redacted of query values and user info).
    ///   - role: What it was given as, such as "upload source" or "download destination".
    ///   - request: The request it was given with.
    package static func notAFileURL(_ url: URL, role: String, request: URL?) -> TransportError {
        TransportError(
            .invalidRequest, url: request,
            message: "The \(role) \(Redactor.url(url)) is not a file URL; only a local file (file://) can be used.")
    }
}
