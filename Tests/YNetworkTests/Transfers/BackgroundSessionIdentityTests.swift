import Foundation
import Testing

@testable import YNetwork

/// The background session (Apple platforms) is identified stably and made once per identifier;
/// the parts of that which are plain Swift are tested here, on every platform.
@Suite("Background session identity")
struct BackgroundSessionIdentityTests {
    @Test("Many callers asking at once for one key get one value, made once")
    func oncePerKeyUnderContention() async {
        // Given a registry and a counter of how often a value is made
        let registry = OncePerKey<Int>()
        let made = Counter()

        // When 200 tasks ask for two keys at once
        let values = await withTaskGroup(of: (String, Int).self) { group in
            for index in 0..<200 {
                let key = index.isMultiple(of: 2) ? "a" : "b"
                group.addTask {
                    (key, registry.value(for: key) { _ in made.next() })
                }
            }
            var values: [String: Set<Int>] = [:]
            for await (key, value) in group { values[key, default: []].insert(value) }
            return values
        }

        // Then each key was made exactly once and everyone got that value
        #expect(made.count == 2)
        #expect(values["a"]?.count == 1)
        #expect(values["b"]?.count == 1)
        #expect(values["a"] != values["b"])
    }

    @Test("The identifier is the caller's, or a stable default derived from the bundle")
    func identifier() {
        let given = URLNetworkEngine(backgroundSessionIdentifier: "com.example.app.transfers")
        #expect(given.backgroundSessionIdentifier == "com.example.app.transfers")

        let defaulted = URLNetworkEngine()
        let empty = URLNetworkEngine(backgroundSessionIdentifier: "")
        #expect(defaulted.backgroundSessionIdentifier == URLNetworkEngine.defaultBackgroundSessionIdentifier)
        #expect(empty.backgroundSessionIdentifier == URLNetworkEngine.defaultBackgroundSessionIdentifier)
        #expect(URLNetworkEngine.defaultBackgroundSessionIdentifier.hasSuffix("gentle.ynetwork.background"))
        // Stable: the same in every call, so a relaunch finds the same session.
        #expect(URLNetworkEngine.defaultBackgroundSessionIdentifier == URLNetworkEngine().backgroundSessionIdentifier)
    }
}

/// A thread-safe counter of values made.
private final class Counter: @unchecked Sendable {
    // @unchecked: `value` is behind `lock`.
    private let lock = NSLock()
    private var value = 0

    func next() -> Int {
        lock.withLock {
            value += 1
            return value
        }
    }

    var count: Int { lock.withLock { value } }
}
