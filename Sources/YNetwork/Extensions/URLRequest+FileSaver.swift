import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLRequest {
    /// Writes the request's `httpBody` to a new file in the temporary directory and returns its
    /// URL, as Y-Network does before an upload. Remove the file when you are done with it.
    ///
    /// The file is named with a fresh UUID and only this user can read it (mode `0600`: a body
    /// may hold personal data, and the temporary directory is shared). A request without a body
    /// gets an empty file (Y-Network returned a URL with no file behind it). The body is already
    /// in memory, so its size is not limited here; for large uploads give the file itself to
    /// ``NetworkManager/submitBackgroundUpload(_:fromFile:progress:resultHandler:)``.
    ///
    /// - Throws: ``URLRequestFileError/streamBody`` when the body is an `httpBodyStream` (it
    ///   can be read only once, so it is left for the request to send), or
    ///   ``MultipartError/cannotWrite(_:)`` when the file cannot be created.
    public func writeDataToFile() throws -> URL {
        if httpBody == nil, httpBodyStream != nil { throw URLRequestFileError.streamBody }
        let file = FileManager.default.temporaryDirectory
            .appendingPathComponent(UUID().uuidString, isDirectory: false)
        try writePrivateFile(httpBody ?? Data(), to: file)
        return file
    }
}

/// Why ``Foundation/URLRequest/writeDataToFile()`` wrote nothing.
public enum URLRequestFileError: Error, Sendable, Equatable {
    /// The body is a stream, which is not read (it can be read only once).
    case streamBody
}
