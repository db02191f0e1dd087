import Foundation

/// A loopback port where nothing listens, reserved for as long as this value lives: every
/// connection to ``baseURL`` is refused (`ECONNREFUSED`), for "nothing listening" tests.
///
/// The socket is bound but never listens, so the kernel answers a connection with a reset, and no
/// other server can take the port meanwhile. A server shut down to free its port does not do
/// that: a test running in parallel may be given the same port a moment later and answer.
public final class RefusingPort: Sendable {
    /// The reserved port.
    public let port: UInt16
    /// `http://127.0.0.1:<port>`.
    public let baseURL: URL
    private let descriptor: Int32

    /// Reserves a free loopback port.
    public init() throws {
        (descriptor, port) = try POSIXSocket.bindLoopback(backlog: nil)
        baseURL = URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/")
    }

    deinit {
        POSIXSocket.closeDescriptor(descriptor)
    }
}
