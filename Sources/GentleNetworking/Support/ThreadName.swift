import Foundation

/// Names the calling thread, as debuggers and `/proc/self/task/*/comm` show it (15 bytes at
/// most on Linux, cut at a character boundary).
///
/// Foundation's `Thread.name`, set before `start()`, never reaches the thread on Linux, so the
/// thread names itself with `pthread_setname_np`. An unnamed thread takes its creator's name: one
/// started from a libdispatch worker would look like one (`oot.default-qos`), and the fault
/// table, which tells pool workers from threads a case owns by name, would not see it leak. So
/// every thread the library starts is started by ``start(_:_:)`` (a test checks the sources).
package enum ThreadName {
    /// Starts a thread named `name` that runs `body`.
    package static func start(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            setCurrent(name)
            body()
        }
        thread.start()
    }

    /// Names the calling thread `name`, cut to 15 bytes (Linux's limit) at a character boundary.
    package static func setCurrent(_ name: String) {
        let capped = name.utf8Prefix(15)
        #if canImport(Glibc) || canImport(Musl)
            // Glibc declares pthread_setname_np only under _GNU_SOURCE, so Swift cannot see it;
            // look it up at run time instead.
            typealias SetName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32
            guard let symbol = dlsym(nil, "pthread_setname_np") else { return }
            _ = unsafeBitCast(symbol, to: SetName.self)(pthread_self(), capped)
        #elseif canImport(Darwin)
            _ = pthread_setname_np(capped)
        #endif
    }
}
