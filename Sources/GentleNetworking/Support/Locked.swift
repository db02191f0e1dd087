import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A value guarded by a lock, for state shared across tasks and threads.
///
/// `Mutex` from the Synchronization module needs macOS 15 / iOS 18, above this package's
/// deployment targets, so this small wrapper stands in for it.
///
/// On Linux the lock is a bare `pthread_mutex_t` (one allocation besides the box): corelibs' `NSLock`
/// allocates a mutex, a condition and a second mutex (for `lock(before:)`) and frees them one by
/// one, which measured about 800 instructions per box made and freed. Boxes are made per request
/// (a transfer's state, an observed request's recorder and log records), so that counted.
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked: every access to `value` happens inside the lock, so no two threads touch it at once.
    #if canImport(Glibc)
        private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    #else
        private let lock = NSLock()
    #endif
    private var value: Value

    package init(_ value: Value) {
        self.value = value
        #if canImport(Glibc)
            mutex = .allocate(capacity: 1)
            mutex.initialize(to: pthread_mutex_t())
            // A default mutex with no attributes: initializing it cannot fail on Linux.
            _ = pthread_mutex_init(mutex, nil)
        #endif
    }

    deinit {
        #if canImport(Glibc)
            _ = pthread_mutex_destroy(mutex)
            mutex.deinitialize(count: 1)
            mutex.deallocate()
        #endif
    }

    /// Runs `body` with exclusive access to the value and returns its result.
    @discardableResult
    package func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure)
        -> Result
    {
        // No `defer`: on the throwing path the inout access to `value` could otherwise outlive
        // the unlock, which ThreadSanitizer rightly reports as a race.
        acquire()
        do {
            let result = try body(&value)
            release()
            return result
        } catch {
            release()
            throw error
        }
    }

    /// A copy of the current value.
    package var current: Value {
        withLock { $0 }
    }

    // A default (non-error-checking) mutex locked and unlocked by the same thread, as here,
    // returns 0 from both calls.
    @inline(__always)
    private func acquire() {
        #if canImport(Glibc)
            _ = pthread_mutex_lock(mutex)
        #else
            lock.lock()
        #endif
    }

    @inline(__always)
    private func release() {
        #if canImport(Glibc)
            _ = pthread_mutex_unlock(mutex)
        #else
            lock.unlock()
        #endif
    }
}
