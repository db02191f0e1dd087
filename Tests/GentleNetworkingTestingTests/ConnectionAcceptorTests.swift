import Foundation
import Testing

@testable import GentleNetworkingTesting

@Suite("ConnectionAcceptor: shutdown wakes the accept thread instead of waiting out its poll")
struct ConnectionAcceptorTests {
    @Test("With a 10-minute poll, shutdown still ends the accept thread and closes the listener")
    func shutdownWakesTheAcceptThread() throws {
        let (listener, port) = try POSIXSocket.listenOnLoopback()
        let prefix = "CA\(port)."
        let acceptor = ConnectionAcceptor(listener: listener, threadNamePrefix: prefix, pollMilliseconds: 600_000)
        acceptor.start { descriptor, _ in { POSIXSocket.closeDescriptor(descriptor) } }
        let started = Date().addingTimeInterval(60)
        while threadNames(withPrefix: prefix).isEmpty, Date() < started { Thread.sleep(forTimeInterval: 0.01) }
        #expect(threadNames(withPrefix: prefix) == ["\(prefix)accept"])

        acceptor.shutdown()

        // Without the wake the thread sits in its poll for ten minutes, and shutdown leaves the
        // listener open after its own 10 s wait. The thread leaves its group just before it
        // exits: give it a moment to be gone.
        let gone = Date().addingTimeInterval(60)
        while !threadNames(withPrefix: prefix).isEmpty, Date() < gone { Thread.sleep(forTimeInterval: 0.01) }
        #expect(threadNames(withPrefix: prefix).isEmpty)
        #expect(!POSIXSocket.canConnect(port: port), "the listener is closed")
    }
}
