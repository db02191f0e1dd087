import Foundation
import GentleNetworking

/// The accepting half of the test servers (``LoopbackServer`` and ``HostileServer``): a listening
/// socket, the thread that accepts on it, one thread per connection, the table of open
/// connections and the stop flag, and the shutdown that ends them all.
///
/// A server's core makes one and hands ``start(serving:)`` the closure that serves one connection.
/// The acceptor does not store that closure: only its threads hold it, and they end in
/// ``shutdown()``. So a closure that captures the core strongly (as the servers' do) makes no
/// cycle: the core owns the acceptor, the threads hold the core, and nothing here holds the public
/// server, whose `deinit` (which shuts the core down) still runs when its last reference goes.
///
/// Threads are named ``threadNamePrefix`` + `accept` and ``threadNamePrefix`` + `c<id>`, where
/// `<id>` counts accepted connections from 1.
final class ConnectionAcceptor: Sendable {
    /// Lets a served connection go: closes its descriptor, in whatever way the server ends a
    /// connection. Runs on the connection's thread, after the acceptor has forgotten the
    /// descriptor, so ``ConnectionAcceptor/shutdown()`` never touches it (or a later socket that
    /// reuses its number).
    typealias Release = () -> Void

    /// Serves one accepted connection, on that connection's own thread, until the client leaves,
    /// the server is done with it or the acceptor stops (``ConnectionAcceptor/isStopped``, and
    /// the socket is shut down under it); then returns how to let it go. The arguments are the
    /// connection's descriptor and its id (1 for the first accepted connection, then 2, …).
    typealias Serve = @Sendable (_ descriptor: Int32, _ id: Int) -> Release

    private struct State {
        /// Every connection whose thread has not yet let it go, by id: all open and ours.
        var connections: [Int: Int32] = [:]
        var acceptedConnections = 0
        var started = false
        var stopped = false
    }

    /// The prefix of the names of the acceptor's threads (thread names are capped at 15
    /// characters on Linux).
    let threadNamePrefix: String
    private let listener: Int32
    private let state = Locked(State())
    private let threads = DispatchGroup()
    /// The accept thread alone (it is in ``threads`` too): the listener is closed only once it
    /// has ended.
    private let acceptThread = DispatchGroup()
    /// A pipe whose read end the accept thread polls beside the listener, and to which
    /// ``shutdown()`` writes, so the thread ends at once rather than at its next 50 ms poll: a
    /// test's `defer { server.shutdown() }` blocks a cooperative pool thread for as long as that
    /// takes (49.5 ms every time, before the pipe). Both ends are -1 if the pipe could not be
    /// made; the poll's timeout still ends the thread.
    private let wake: (read: Int32, write: Int32)

    /// How long the accept thread waits in one poll before it looks at the stop flag again.
    private let pollMilliseconds: Int32

    /// Takes over `listener`, a listening socket, which ``shutdown()`` closes; accepts nothing
    /// until ``start(serving:)``. `pollMilliseconds` (50 by default) only matters if the wake
    /// pipe could not be made; tests lengthen it to show that the pipe, not the poll, ends the
    /// accept thread.
    init(listener: Int32, threadNamePrefix: String, pollMilliseconds: Int32 = 50) {
        self.listener = listener
        self.threadNamePrefix = threadNamePrefix
        self.pollMilliseconds = pollMilliseconds
        self.wake = POSIXSocket.makeWakePipe()
    }

    /// Whether ``shutdown()`` has begun. A connection's `serve` checks it between steps and stops.
    var isStopped: Bool { state.withLock { $0.stopped } }

    /// How many connections were accepted so far (those accepted while stopping, closed at once,
    /// are not counted).
    var acceptedConnectionCount: Int { state.withLock { $0.acceptedConnections } }

    /// Starts the accept thread; every accepted connection gets a thread of its own that runs
    /// `serve`, then forgets the connection and runs the ``Release`` `serve` returned.
    ///
    /// Only the first call starts anything; a call after ``shutdown()`` does nothing.
    func start(serving serve: @escaping Serve) {
        let starts = state.withLock { state -> Bool in
            guard !state.started, !state.stopped else { return false }
            state.started = true
            return true
        }
        guard starts else { return }
        threads.enter()
        acceptThread.enter()
        let thread = Thread { [self] in
            ThreadName.setCurrent("\(threadNamePrefix)accept")
            acceptLoop(serve)
            acceptThread.leave()
            threads.leave()
        }
        thread.start()
    }

    /// Stops accepting, shuts down every connection (waking a thread blocked on it), waits up to
    /// 10 s for every thread, and closes the listener. Safe to call more than once: later calls
    /// return at once. A thread still running after 10 s (a handler that never returns) is left
    /// to end on its own; the listener is closed all the same, unless the accept thread itself
    /// is still running (it could accept on a reused descriptor number): then it stays open.
    ///
    /// One pass over the connections is enough: a connection is registered under the same lock,
    /// and only while not stopped, so every connection ever served is either in the table when
    /// the flag is set here (and shut down with it) or closed by the accept loop unserved.
    func shutdown() {
        // Under the lock: a connection's thread takes it out of `connections` before closing
        // it, so every descriptor still listed is open and ours. Outside the lock, a descriptor
        // closed meanwhile could already be another socket of the process with the same number
        // (another test's listener), and `shutdown(2)` on it would stop that one.
        let first = state.withLock { state -> Bool in
            if state.stopped { return false }
            state.stopped = true
            for descriptor in state.connections.values { POSIXSocket.shutdownBoth(descriptor) }
            return true
        }
        guard first else { return }
        POSIXSocket.signalWakePipe(wake.write)
        _ = threads.wait(timeout: .now() + 10)
        // An accept thread still running (starved for 10 s) may be about to call `accept` on
        // the listener or poll the pipe: closed under it, a number could by then be another
        // test's socket. The descriptors are left open instead (a leak of three, in a run that
        // is already stuck).
        guard acceptThread.wait(timeout: .now()) == .success else { return }
        POSIXSocket.closeDescriptor(listener)
        POSIXSocket.closeDescriptor(wake.read)
        POSIXSocket.closeDescriptor(wake.write)
    }

    /// Accepts until stopped, registering each connection and starting its thread. A connection
    /// accepted once the acceptor has stopped is closed unserved, and the loop ends. This thread
    /// stays in `threads` until then, so `shutdown()`'s wait also covers every thread it starts.
    private func acceptLoop(_ serve: @escaping Serve) {
        while !isStopped {
            guard POSIXSocket.waitReadable(listener, orWoken: wake.read, milliseconds: pollMilliseconds) else {
                continue
            }
            guard let client = POSIXSocket.accept(listener) else { continue }
            let id = state.withLock { state -> Int? in
                if state.stopped { return nil }
                state.acceptedConnections += 1
                state.connections[state.acceptedConnections] = client
                return state.acceptedConnections
            }
            guard let id else {
                POSIXSocket.closeDescriptor(client)
                return
            }
            threads.enter()
            let thread = Thread { [self] in
                ThreadName.setCurrent("\(threadNamePrefix)c\(id)")
                let release = serve(client, id)
                // Forget the descriptor first, so shutdown() never touches a reused number.
                state.withLock { _ = $0.connections.removeValue(forKey: id) }
                release()
                threads.leave()
            }
            thread.stackSize = 512 * 1024
            thread.start()
        }
    }
}
