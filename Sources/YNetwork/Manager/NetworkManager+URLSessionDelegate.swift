import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `NetworkManager` is a `URLSession` delegate, as Y-Network's is, so that code passing it as
/// one (`NetworkManagerConfiguration(sessionDelegate: manager)`, `manager as URLSessionDelegate`)
/// compiles unchanged.
///
/// Y-Network's manager routed its background tasks' progress and completion through these
/// callbacks. Ours reports every transfer through its handlers and ``TransferProgress``, so the
/// callbacks of tasks it is told about change nothing: a task started through
/// ``NetworkEngine/submitBackgroundDownload(_:)`` on a session with this manager as delegate
/// runs to its end, and its file is removed by the session as usual.
extension NetworkManager: URLSessionDownloadDelegate, URLSessionDataDelegate {
    /// Does nothing: the manager's own downloads report through their handlers.
    public func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL
    ) {}
}
