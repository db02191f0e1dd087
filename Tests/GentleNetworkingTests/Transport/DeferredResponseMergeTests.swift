import Foundation
import Testing

@testable import GentleNetworking

/// `DeferredResponse.merged` merges a head's fields as `HTTPURLResponse` does; it takes a
/// byte-wise path for short heads and a hashing one for long heads, which must agree.
@Suite("DeferredResponse.merged")
struct DeferredResponseMergeTests {
    @Test("Repeats keep the first spelling and join values with \", \"; nameless fields are dropped")
    func repeats() {
        let fields = [
            ("Cache-Control", "no-cache"), ("ETag", "\"a\""), ("cache-control", "private"), ("", "x"),
            ("Vary", "Accept"), ("CACHE-CONTROL", "max-age=0"), ("vary", "Cookie"),
        ]
        let expected = [
            "Cache-Control": "no-cache, private, max-age=0", "ETag": "\"a\"", "Vary": "Accept, Cookie",
        ]
        #expect(DeferredResponse.merged(fields) == expected)
        #expect(DeferredResponse.mergedHashing(fields) == expected)
        var order: [String] = []
        DeferredResponse.forEachMerged(fields) { name, _ in order.append(name) }
        #expect(order == ["Cache-Control", "ETag", "Vary"])
    }

    @Test("The short-head and long-head paths agree on random heads, below and above 32 fields")
    func pathsAgree() {
        var generator = SeededGenerator(seed: 0x5EED)
        let names = ["A", "a", "B", "b", "Set-Cookie", "set-cookie", "X-Long-Name", "x-long-name", "", "C"]
        for count in [0, 1, 2, 5, 12, 31, 32, 33, 64, 256] {
            for _ in 0..<20 {
                let fields = (0..<count).map { index in
                    (names[Int(generator.next() % UInt64(names.count))], "v\(index)")
                }
                #expect(DeferredResponse.merged(fields) == DeferredResponse.mergedHashing(fields))
                // The walk itself, in order: what a 304's renewal applies one by one.
                var walked: [String] = []
                var hashed: [String] = []
                DeferredResponse.forEachMerged(fields) { walked.append($0 + ": " + $1) }
                DeferredResponse.forEachMergedHashing(fields) { hashed.append($0 + ": " + $1) }
                #expect(walked == hashed)
            }
        }
    }

    @Test("Only ASCII letters fold, on both paths: names that differ in a non-ASCII letter stay apart")
    func nonASCIINames() {
        // "É" and "é" are one letter in two cases for `lowercased()`, two names for HTTP.
        let short = [("X-É", "1"), ("x-é", "2"), ("X-E", "3"), ("x-e", "4")]
        let long = short + (0..<40).map { ("F\($0)", "v") }
        for fields in [short, long] {
            let merged = DeferredResponse.merged(fields)
            #expect(merged["X-É"] == "1")
            #expect(merged["x-é"] == "2")
            #expect(merged["X-E"] == "3, 4")
            #expect(merged == DeferredResponse.mergedHashing(fields))
        }
    }

    /// xorshift64*: deterministic, so a failure reproduces.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            return state &* 2_685_821_657_736_338_717
        }
    }
}

@Suite("String(concatenating:)")
struct StringConcatenationTests {
    @Test("Joins ASCII, multi-byte and empty parts exactly as + does")
    func joins() {
        let parts = [
            "GET", " ", "https://h/ä?q=€", "", " accept:", "", " ", "auth:😀", String(repeating: "x", count: 300),
        ]
        #expect(String(concatenating: parts) == parts.reduce("", +))
        #expect(String(concatenating: []).isEmpty)
        #expect(String(concatenating: ["", ""]).isEmpty)
    }
}
