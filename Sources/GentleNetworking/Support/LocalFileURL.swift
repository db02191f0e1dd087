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

extension TransportError {
    /// The path of a download's `destination`, checked before anything is sent, the same way on
    /// every download path (``CurlTransport``, a download through memory, Y-Network's engines):
    /// a file URL, in a directory that exists, not itself a directory. An existing file (or
    /// symbolic link) there is replaced when the download completes, by a rename: nothing is
    /// removed beforehand, so a failed download leaves it as it was.
    ///
    /// - Throws: ``TransportError/Code/invalidRequest`` naming what is wrong (a directory given
    ///   as the destination was deleted, with everything in it, by Y-Network's engines).
    package static func downloadDestinationPath(_ destination: URL, request: URL?) throws(TransportError) -> String {
        guard let path = destination.localFilePath else {
            throw notAFileURL(destination, role: "download destination", request: request)
        }
        var status = stat()
        if lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            throw TransportError(
                .invalidRequest, url: request,
                message: "The download destination \(path) is a directory; a download needs a file's path.")
        }
        let parent = (path as NSString).deletingLastPathComponent
        var parentStatus = stat()
        guard stat(parent.isEmpty ? "." : parent, &parentStatus) == 0, parentStatus.st_mode & S_IFMT == S_IFDIR else {
            throw TransportError(
                .invalidRequest, url: request,
                message: "The download destination's directory \(parent) does not exist or is not a directory.")
        }
        return path
    }
}
