import Foundation
import GentleNetworking

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Thin wrappers over the BSD socket calls the loopback server needs, with the platform
/// differences (SOCK_STREAM's type, SIGPIPE suppression) kept in this one file.
package enum POSIXSocket {
    struct Failure: Error, CustomStringConvertible {
        let operation: String
        let code: Int32
        var description: String { "\(operation) failed: \(String(cString: strerror(code))) (errno \(code))" }
    }

    /// Opens a listening TCP socket on 127.0.0.1 and returns it with the port the kernel chose.
    static func listenOnLoopback(port: UInt16 = 0, backlog: Int32 = 512) throws -> (descriptor: Int32, port: UInt16) {
        try bindLoopback(port: port, backlog: backlog)
    }

    /// Binds a TCP socket to 127.0.0.1 (the kernel picks the port for 0) and, with a `backlog`,
    /// listens on it. Without one the port is reserved and refuses every connection.
    static func bindLoopback(port: UInt16 = 0, backlog: Int32?) throws -> (descriptor: Int32, port: UInt16) {
        let descriptor = makeTCPSocket()
        guard descriptor >= 0 else { throw Failure(operation: "socket", code: errno) }
        if backlog != nil {
            // Not for a reserved port: Linux lets sockets that all set SO_REUSEADDR share a port
            // while none listens, so a server could be given it.
            var yes: Int32 = 1
            setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        }
        let bound = withLoopbackAddress(port: port) { bind(descriptor, $0, $1) }
        guard bound == 0 else {
            let code = errno
            close(descriptor)
            throw Failure(operation: "bind", code: code)
        }
        if let backlog, listen(descriptor, backlog) != 0 {
            let code = errno
            close(descriptor)
            throw Failure(operation: "listen", code: code)
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return (descriptor, UInt16(bigEndian: actual.sin_port))
    }

    /// A loopback port that is free right now (bound, read, released).
    static func freeLoopbackPort() throws -> UInt16 {
        let (descriptor, port) = try listenOnLoopback(backlog: 1)
        closeDescriptor(descriptor)
        return port
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    static func canConnect(port: UInt16) -> Bool {
        guard let descriptor = connectLoopback(port: port) else { return false }
        closeDescriptor(descriptor)
        return true
    }

    /// A TCP socket connected to 127.0.0.1:`port`, or `nil` when nothing accepts there.
    package static func connectLoopback(port: UInt16) -> Int32? {
        let descriptor = makeTCPSocket()
        guard descriptor >= 0 else { return nil }
        guard withLoopbackAddress(port: port, { connect(descriptor, $0, $1) }) == 0 else {
            closeDescriptor(descriptor)
            return nil
        }
        return descriptor
    }

    /// A new close-on-exec IPv4 TCP socket, or -1.
    private static func makeTCPSocket() -> Int32 {
        #if canImport(Glibc) || canImport(Musl)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        if descriptor >= 0 { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        return descriptor
    }

    /// Calls `body` with 127.0.0.1:`port` as a `sockaddr` and its length.
    private static func withLoopbackAddress(
        port: UInt16, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32
    ) -> Int32 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    /// Waits up to `milliseconds` for `descriptor` to become readable.
    static func waitReadable(_ descriptor: Int32, milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, milliseconds) > 0
    }

    /// Waits until `descriptor` is readable, `wake` is readable (a byte was written to its pipe)
    /// or `milliseconds` pass; true only when `descriptor` is readable. A `wake` of -1 is ignored.
    static func waitReadable(_ descriptor: Int32, orWoken wake: Int32, milliseconds: Int32) -> Bool {
        var entries = [
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
        ]
        guard poll(&entries, 2, milliseconds) > 0 else { return false }
        return entries[0].revents & Int16(POLLIN) != 0
    }

    /// A close-on-exec, non-blocking pipe as (read, write), or (-1, -1) if none could be made.
    static func makeWakePipe() -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return (-1, -1) }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        return (ends[0], ends[1])
    }

    /// Writes one byte to a pipe made by ``makeWakePipe()``, waking whoever polls its read end;
    /// does nothing for -1 (or a full pipe, which is readable already).
    static func signalWakePipe(_ descriptor: Int32) {
        guard descriptor >= 0 else { return }
        let byte: [UInt8] = [1]
        _ = byte.withUnsafeBytes { write(descriptor, $0.baseAddress, 1) }
    }

    /// Accepts one connection, or returns `nil` when none is pending.
    static func accept(_ listener: Int32) -> Int32? {
        #if canImport(Glibc) || canImport(Musl)
            let client = Glibc.accept(listener, nil, nil)
        #else
            let client = Darwin.accept(listener, nil, nil)
        #endif
        guard client >= 0 else { return nil }
        _ = fcntl(client, F_SETFD, FD_CLOEXEC)
        var yes: Int32 = 1
        setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
            setsockopt(client, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
        #endif
        return client
    }

    /// Reads what is available, up to `buffer.count` bytes: 0 at end of stream, -1 on error.
    static func receive(_ descriptor: Int32, into buffer: inout [UInt8]) -> Int {
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            return count
        }
    }

    /// Writes all of `bytes`; `false` when the peer has gone.
    @discardableResult
    static func sendAll(_ descriptor: Int32, _ bytes: some Collection<UInt8>) -> Bool {
        let array = Array(bytes)
        var offset = 0
        #if canImport(Glibc) || canImport(Musl)
            let flags = Int32(MSG_NOSIGNAL)
        #else
            let flags: Int32 = 0
        #endif
        while offset < array.count {
            let written = array.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return send(descriptor, base + offset, raw.count - offset, flags)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }

    /// Whether the peer has closed its side: a non-blocking peek that reads end-of-stream or an
    /// error. Bytes waiting to be read (a pipelined request) do not count as closed.
    static func peerHasClosed(_ descriptor: Int32) -> Bool {
        var byte: UInt8 = 0
        let count = recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if count == 0 { return true }
        if count < 0 { return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR }
        return false
    }

    /// Stops reads and writes on `descriptor`, waking any thread blocked on it.
    static func shutdownBoth(_ descriptor: Int32) {
        #if canImport(Glibc) || canImport(Musl)
            _ = shutdown(descriptor, Int32(SHUT_RDWR))
        #else
            _ = shutdown(descriptor, SHUT_RDWR)
        #endif
    }

    /// Writes as much of `bytes` as the socket takes without blocking: the count written, 0 when
    /// its send buffer is full, or -1 when the peer has gone (EPIPE, ECONNRESET, …). Never raises
    /// SIGPIPE.
    static func sendWithoutBlocking(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return 0 }
        #if canImport(Glibc) || canImport(Musl)
            let flags = Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)
        #else
            let flags = Int32(MSG_DONTWAIT)
        #endif
        while true {
            let written = send(descriptor, base, bytes.count, flags)
            if written >= 0 { return written }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return 0 }
            return -1
        }
    }

    /// Waits up to `milliseconds` for any of `events` (`POLLIN`, `POLLOUT`) on `descriptor` and
    /// returns the events that occurred (`POLLERR` and `POLLHUP` included), 0 on timeout.
    static func waitForEvents(_ descriptor: Int32, _ events: Int32, milliseconds: Int32) -> Int32 {
        var entry = pollfd(fd: descriptor, events: Int16(truncatingIfNeeded: events), revents: 0)
        guard poll(&entry, 1, milliseconds) > 0 else { return 0 }
        return Int32(entry.revents)
    }

    /// Stops writes on `descriptor`: the peer reads end-of-stream after the bytes already sent.
    static func shutdownWrite(_ descriptor: Int32) {
        #if canImport(Glibc) || canImport(Musl)
            _ = shutdown(descriptor, Int32(SHUT_WR))
        #else
            _ = shutdown(descriptor, SHUT_WR)
        #endif
    }

    /// Aborts the connection: `SO_LINGER` {on, 0 s} then `close`, so the peer gets a TCP RST
    /// (reads fail with ECONNRESET) instead of an orderly end-of-stream.
    static func resetAndClose(_ descriptor: Int32) {
        var abort = linger(l_onoff: 1, l_linger: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &abort, socklen_t(MemoryLayout<linger>.size))
        _ = close(descriptor)
    }

    /// Closes `descriptor`.
    package static func closeDescriptor(_ descriptor: Int32) {
        _ = close(descriptor)
    }
}
