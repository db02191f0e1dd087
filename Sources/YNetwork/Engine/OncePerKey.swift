import Foundation

/// Values made at most once per key per process: the first caller for a key makes the value,
/// under the lock, and every caller, concurrent or later, gets that one. For things the system
/// allows only one of per key, such as a background `URLSession` per identifier.
final class OncePerKey<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `values` is read and written only under `lock`.
    private let lock = NSLock()
    private var values: [String: Value] = [:]

    /// The value for `key`, made by `make` if there is none yet. `make` runs under the lock, so
    /// it must not ask this instance for a value.
    func value(for key: String, make: (String) -> Value) -> Value {
        lock.withLock {
            if let existing = values[key] { return existing }
            let made = make(key)
            values[key] = made
            return made
        }
    }
}
