import Foundation

/// A value guarded by a lock, for state shared across tasks and threads.
///
/// `Mutex` from the Synchronization module needs macOS 15 / iOS 18, above this package's
/// deployment targets, so this small wrapper stands in for it.
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked: every access to `value` happens inside `lock`, so no two threads touch it at once.
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
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

    /// A copy of the current value.
    package var current: Value {
        withLock { $0 }
    }
}
