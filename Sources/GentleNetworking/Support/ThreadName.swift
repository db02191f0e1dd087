import Foundation

/// Names the calling thread, as debuggers and `/proc/self/task/*/comm` show it (15 bytes at
/// most on Linux, cut at a character boundary).
///
/// Foundation's `Thread.name`, set before `start()`, never reaches the thread on Linux, so the
/// thread names itself with `pthread_setname_np`.
package enum ThreadName {
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
