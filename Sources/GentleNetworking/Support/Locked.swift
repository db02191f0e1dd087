import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A value guarded by a lock, for state shared across tasks and threads.
///
/// `Mutex` from the Synchronization module needs macOS 15 / iOS 18, above this package's
/// deployment targets, so this small wrapper stands in for it. Copies share one value and one
/// lock (the storage is a reference), so a `Locked` is passed around and captured as a class is.
///
/// On Linux the value and a bare `pthread_mutex_t` live in one allocation (a `ManagedBuffer`):
/// corelibs' `NSLock` allocates a mutex, a condition and a second mutex (for `lock(before:)`) and
/// frees them one by one, which measured about 800 instructions per box made and freed, and a
/// separately allocated mutex cost one more allocation and free per box. Boxes are made per
/// request (a transfer's state, an observed request's recorder and log records), so that counted.
package struct Locked<Value>: @unchecked Sendable {
    // @unchecked: every access to the value happens inside the lock, so no two threads touch it
    // at once.
    private let storage: LockedStorage<Value>

    package init(_ value: Value) {
        storage = LockedStorage.make(value)
    }

    /// Runs `body` with exclusive access to the value and returns its result.
    @discardableResult @inline(__always)
    package func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure)
        -> Result
    {
        try storage.withLock(body)
    }

    /// A copy of the current value.
    package var current: Value {
        withLock { $0 }
    }
}

#if canImport(Glibc)
    /// The value (the buffer's header) and its mutex (the buffer's one element), in one
    /// allocation. The mutex's address is stable: it is the buffer's element storage.
    final class LockedStorage<Value>: ManagedBuffer<Value, pthread_mutex_t> {
        static func make(_ value: Value) -> LockedStorage<Value> {
            let buffer = create(minimumCapacity: 1) { _ in value }
            // `create` called on this subclass allocates an instance of it.
            let storage = unsafeDowncast(buffer, to: LockedStorage<Value>.self)
            storage.withUnsafeMutablePointerToElements { mutex in
                mutex.initialize(to: pthread_mutex_t())
                // A default mutex with no attributes: initializing it cannot fail on Linux.
                _ = pthread_mutex_init(mutex, nil)
            }
            return storage
        }

        deinit {
            // ManagedBuffer deinitializes the header (the value); the element is ours.
            withUnsafeMutablePointerToElements { mutex in
                _ = pthread_mutex_destroy(mutex)
                mutex.deinitialize(count: 1)
            }
        }

        @inline(__always)
        func withLock<Result, Failure: Error>(
            _ body: (inout Value) throws(Failure) -> Result
        ) throws(Failure) -> Result {
            // The body's outcome is kept as a `Result` and the mutex released before it is
            // returned or thrown (with `defer`, the inout access to the value could outlive the
            // unlock, which ThreadSanitizer rightly reports as a race). A default
            // (non-error-checking) mutex locked and unlocked by the same thread, as here, returns
            // 0 from both calls.
            let outcome = withUnsafeMutablePointers { value, mutex in
                _ = pthread_mutex_lock(mutex)
                let outcome = Swift.Result { () throws(Failure) -> Result in try body(&value.pointee) }
                _ = pthread_mutex_unlock(mutex)
                return outcome
            }
            return try outcome.get()
        }
    }
#else
    /// The value and an `NSLock`.
    final class LockedStorage<Value> {
        private let lock = NSLock()
        private var value: Value

        private init(_ value: Value) {
            self.value = value
        }

        static func make(_ value: Value) -> LockedStorage<Value> {
            LockedStorage(value)
        }

        @inline(__always)
        func withLock<Result, Failure: Error>(
            _ body: (inout Value) throws(Failure) -> Result
        ) throws(Failure) -> Result {
            // No `defer`, as above.
            lock.lock()
            do {
                let result = try body(&value)
                lock.unlock()
                return result
            } catch {
                lock.unlock()
                throw error
            }
        }
    }
#endif
