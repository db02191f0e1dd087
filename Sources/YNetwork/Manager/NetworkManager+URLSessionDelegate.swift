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
///
/// The callbacks themselves (`didFinishDownloadingTo`, `didWriteData`, `didSendBodyData`,
/// `didCompleteWithError`, `didReceive data`) are `open` methods of the class, so that a
/// subclass can override them, as Y-Network's tests do, on Linux too.
extension NetworkManager: URLSessionDownloadDelegate, URLSessionDataDelegate {}
