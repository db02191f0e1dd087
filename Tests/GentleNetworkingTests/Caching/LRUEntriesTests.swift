import Foundation
import Testing

@testable import GentleNetworking

@Suite("LRUEntries")
struct LRUEntriesTests {
    /// The obvious implementation: an array from the most to the least recently used.
    struct Reference {
        var entries: [(key: String, value: Int, size: Int)] = []

        var totalSize: Int { entries.reduce(0) { $0 + $1.size } }

        mutating func value(for key: String) -> Int? {
            guard let index = entries.firstIndex(where: { $0.key == key }) else { return nil }
            let entry = entries.remove(at: index)
            entries.insert(entry, at: 0)
            return entry.value
        }

        mutating func set(_ value: Int, size: Int, for key: String) {
            entries.removeAll { $0.key == key }
            entries.insert((key, value, size), at: 0)
        }

        mutating func removeValue(for key: String) {
            entries.removeAll { $0.key == key }
        }

        mutating func removeOldest() -> String? {
            entries.popLast()?.key
        }
    }

    @Test("Agrees with a naive list over 20,000 random operations", arguments: [UInt64(1), 7, 2026])
    func matchesReference(seed: UInt64) {
        var generator = DeferredResponseMergeTests.SeededGenerator(seed: seed)
        var entries = LRUEntries<Int>()
        var reference = Reference()
        // Few keys, so hits, replacements and removals of present keys are frequent.
        let keys = (0..<24).map { "k\($0)" }
        for step in 0..<20_000 {
            let key = keys[Int.random(in: 0..<keys.count, using: &generator)]
            switch Int.random(in: 0..<100, using: &generator) {
            case 0..<35:
                let (got, expected) = (entries.value(for: key), reference.value(for: key))
                #expect(got == expected, "step \(step)")
            case 35..<75:
                let size = Int.random(in: 0..<1000, using: &generator)
                entries.set(step, size: size, for: key)
                reference.set(step, size: size, for: key)
            case 75..<88:
                entries.removeValue(for: key)
                reference.removeValue(for: key)
            case 88..<99:
                let (removed, expected) = (entries.removeOldest(), reference.removeOldest())
                #expect(removed == expected, "step \(step)")
            default:
                entries.removeAll()
                reference = Reference()
            }
            #expect(entries.count == reference.entries.count, "step \(step)")
            #expect(entries.totalSize == reference.totalSize, "step \(step)")
            #expect(entries.keysByRecency == reference.entries.map(\.key), "step \(step)")
            if entries.keysByRecency != reference.entries.map(\.key) { return }
        }
    }

    @Test("Empty: nothing to read, remove or evict")
    func empty() {
        var entries = LRUEntries<Int>()
        let missing = entries.value(for: "a")
        #expect(missing == nil)
        entries.removeValue(for: "a")
        let evicted = entries.removeOldest()
        #expect(evicted == nil)
        #expect(entries.count == 0)
        #expect(entries.totalSize == 0)
        #expect(entries.keysByRecency.isEmpty)
    }

    @Test("A replaced entry is renewed in place: newest, its size counted once")
    func replacement() {
        var entries = LRUEntries<String>()
        entries.set("a1", size: 10, for: "a")
        entries.set("b1", size: 20, for: "b")
        entries.set("a2", size: 5, for: "a")
        #expect(entries.keysByRecency == ["a", "b"])
        #expect(entries.totalSize == 25)
        let renewed = entries.value(for: "a")
        #expect(renewed == "a2")
        let evicted = entries.removeOldest()
        #expect(evicted == "b")
        #expect(entries.keysByRecency == ["a"])
        #expect(entries.totalSize == 5)
    }
}

@Suite("InMemoryETagStore at scale")
struct InMemoryETagStoreScaleTests {
    @Test("100,000 entries: the least recently used go first, by count and by bytes")
    func largeStore() async {
        let count = 100_000
        let store = InMemoryETagStore(maxEntries: count, maxBytes: .max)
        for index in 0..<count {
            store.put(entry("v"), for: "k\(index)")
        }
        // Touch the first 1,000: they become the newest, so the next 1,000 insertions evict
        // k1000…k1999 instead.
        for index in 0..<1000 {
            #expect(store.entry(for: "k\(index)") != nil)
        }
        for index in count..<(count + 1000) {
            store.put(entry("v"), for: "k\(index)")
        }
        #expect(await store.count == count)
        #expect(store.entry(for: "k0") != nil)
        #expect(store.entry(for: "k999") != nil)
        #expect(store.entry(for: "k1000") == nil)
        #expect(store.entry(for: "k1999") == nil)
        #expect(store.entry(for: "k2000") != nil)
        #expect(store.entry(for: "k\(count + 999)") != nil)

        // A byte cap: one entry of half the cap evicts as many of the oldest as it needs.
        let one = entry("v").approximateSize
        let capped = InMemoryETagStore(maxEntries: count, maxBytes: one * 1000)
        for index in 0..<1000 {
            capped.put(entry("v"), for: "k\(index)")
        }
        capped.put(entry(String(repeating: "x", count: one * 500)), for: "big")
        #expect(await capped.byteCount <= one * 1000)
        #expect(capped.entry(for: "big") != nil)
        #expect(capped.entry(for: "k0") == nil)
        #expect(capped.entry(for: "k999") != nil)
    }
}
