import Foundation
import Testing

@testable import GentleNetworking

/// `DeadlineTimer`, the one timer behind every `URLSessionTransport` call's deadlines: each item
/// is looked at when its deadline comes (not before), again at the later deadline it hands back,
/// never after it was removed or freed, and an earlier item moves the timer forward. Each test
/// has a timer of its own (the shared one serves the transports of other tests meanwhile).
@Suite("DeadlineTimer: one timer for every URLSession call's deadlines")
struct DeadlineTimerTests {
    /// An item that records when it was looked at and answers from a list of next deadlines
    /// (offsets from the look, in ms; `nil` ends it).
    final class Probe: DeadlineWatched, Sendable {
        private let state: Locked<(checks: [UInt64], answers: [UInt64?])>

        init(answers: [UInt64?]) {
            state = Locked((checks: [], answers: answers))
        }

        var checks: [UInt64] { state.withLock { $0.checks } }

        func checkDeadlines(now: UInt64) -> UInt64? {
            state.withLock { state in
                state.checks.append(now)
                guard !state.answers.isEmpty, let offset = state.answers.removeFirst() else { return nil }
                return now + offset * 1_000_000
            }
        }
    }

    private static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Waits (at most 5 s) until `condition` holds.
    private static func eventually(_ condition: () -> Bool) async throws {
        let limit = now() + 5_000_000_000
        while !condition(), now() < limit { try await Task.sleep(nanoseconds: 5_000_000) }
    }

    @Test("An item is looked at once its deadline has come, not before, and dropped when it ends")
    func looksAtTheDeadline() async throws {
        let timer = DeadlineTimer(label: "test.deadlines.1")
        let probe = Probe(answers: [nil])
        let deadline = Self.now() + 80_000_000
        timer.add(probe, deadline: deadline)
        #expect(timer.count == 1)
        try await Self.eventually { timer.count == 0 }
        let checks = probe.checks
        #expect(checks.count == 1)
        #expect(checks.first.map { $0 >= deadline } == true)
        #expect(timer.count == 0)
    }

    @Test("A later deadline handed back is looked at again then; the item stays watched until it ends")
    func rearmsForTheNextDeadline() async throws {
        let timer = DeadlineTimer(label: "test.deadlines.2")
        let probe = Probe(answers: [60, 60, nil])
        timer.add(probe, deadline: Self.now() + 30_000_000)
        try await Self.eventually { probe.checks.count == 3 }
        let checks = probe.checks
        #expect(checks.count == 3)
        // Each look came after the deadline the one before handed back.
        for (earlier, later) in zip(checks, checks.dropFirst()) {
            #expect(later >= earlier + 60_000_000)
        }
        try await Self.eventually { timer.count == 0 }
        #expect(timer.count == 0)
    }

    @Test("An item added with an earlier deadline than the timer's is looked at on time")
    func earlierItemMovesTheTimer() async throws {
        let timer = DeadlineTimer(label: "test.deadlines.3")
        let late = Probe(answers: [nil])
        let early = Probe(answers: [nil])
        timer.add(late, deadline: Self.now() + 30_000_000_000)
        let earlyDeadline = Self.now() + 50_000_000
        timer.add(early, deadline: earlyDeadline)
        try await Self.eventually { !early.checks.isEmpty }
        #expect(early.checks.count == 1)
        // The late item was looked at too (the timer looks at every item when it fires), and
        // handed nothing back: it ended.
        #expect(timer.count == 0)
        // Well before the late deadline: the timer was moved forward, not left at 30 s.
        #expect(early.checks.first.map { $0 >= earlyDeadline && $0 < earlyDeadline + 4_000_000_000 } == true)
    }

    @Test("A removed item is never looked at; a freed one is dropped")
    func removedAndFreedItems() async throws {
        let timer = DeadlineTimer(label: "test.deadlines.4")
        let removed = Probe(answers: [nil])
        let witness = Probe(answers: [nil])
        timer.add(removed, deadline: Self.now() + 40_000_000)
        timer.add(witness, deadline: Self.now() + 60_000_000)
        timer.remove(removed)
        do {
            let freed = Probe(answers: [nil])
            timer.add(freed, deadline: Self.now() + 40_000_000)
        }
        #expect(timer.count == 2)
        try await Self.eventually { !witness.checks.isEmpty && timer.count == 0 }
        #expect(removed.checks.isEmpty)
        #expect(witness.checks.count == 1)
        #expect(timer.count == 0)
    }

    @Test("A deadline at the end of time schedules nothing that traps")
    func farDeadline() async throws {
        let timer = DeadlineTimer(label: "test.deadlines.5")
        let probe = Probe(answers: [nil])
        timer.add(probe, deadline: UInt64.max)
        timer.add(probe, deadline: UInt64.max - 1)
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(probe.checks.isEmpty)
        timer.remove(probe)
        #expect(timer.count == 0)
    }
}
