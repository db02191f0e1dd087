import Foundation
import GentleNetworking
import Testing

@Suite("The refresh state machine")
struct RefreshCoordinatorStateTests {
    let t0 = Date(timeIntervalSince1970: 0)

    @Test("Concurrent 401s with the same credential: one starts, the rest join")
    func singleFlight() {
        var state = RefreshCoordinatorState(maxRefreshes: 3, window: 60)
        #expect(state.unauthorized(sent: "A", current: "A", now: t0) == .startRefresh)
        for _ in 0..<99 {
            #expect(state.unauthorized(sent: "A", current: "A", now: t0) == .joinRefresh)
        }
        #expect(state.refreshStarts.count == 1)
        state.refreshSucceeded()
        #expect(!state.isRefreshing)
    }

    @Test("A 401 for an already-replaced credential retries with the current one, no refresh")
    func staleCredential() {
        var state = RefreshCoordinatorState(maxRefreshes: 3, window: 60)
        _ = state.unauthorized(sent: "A", current: "A", now: t0)
        state.refreshSucceeded()
        // The late 401 read the current credential before the refresh finished: "A" still.
        #expect(state.unauthorized(sent: "A", current: "A", now: t0) == .retryWithCurrentCredentials)
        #expect(state.refreshStarts.count == 1)
        // A credential this state never saw: the caller's own (or one the app replaced by
        // itself), which ours must not replace.
        #expect(state.unauthorized(sent: "X", current: "Y", now: t0) == .notIssued)
        #expect(state.unauthorized(sent: "X", current: nil, now: t0) == .notIssued)
        #expect(state.refreshStarts.count == 1)
    }

    @Test("A late 401 for a retired credential while its successor is being refreshed joins that refresh")
    func retiredDuringRefresh() {
        var state = RefreshCoordinatorState(maxRefreshes: 3, window: 60)
        #expect(state.unauthorized(sent: "A", current: "A", now: t0) == .startRefresh)
        state.refreshSucceeded(newCredential: "B")
        #expect(state.unauthorized(sent: "B", current: "B", now: t0) == .startRefresh)
        // Retried with the current one now, it would go with B, itself being refreshed away
        // from, and its 401 would be returned: it waits for C instead.
        #expect(state.unauthorized(sent: "A", current: "B", now: t0) == .joinRefresh)
        state.refreshSucceeded(newCredential: "C")
        #expect(state.unauthorized(sent: "A", current: "C", now: t0) == .retryWithCurrentCredentials)
        #expect(state.refreshStarts.count == 2)
    }

    @Test("A credential the state has not seen is not ours, during a refresh too; ours join it")
    func notIssuedDuringRefresh() {
        var state = RefreshCoordinatorState(maxRefreshes: 3, window: 60)
        #expect(state.unauthorized(sent: "A", current: "A", now: t0) == .startRefresh)
        #expect(state.unauthorized(sent: "P", current: "A", now: t0) == .notIssued)
        #expect(state.unauthorized(sent: "A", current: "A", now: t0) == .joinRefresh)
        state.refreshSucceeded(newCredential: "B")
        #expect(state.unauthorized(sent: "A", current: "B", now: t0) == .retryWithCurrentCredentials)
        #expect(state.unauthorized(sent: "P", current: "B", now: t0) == .notIssued)
    }

    @Test("A failed refresh retires nothing, so the next 401 may try again")
    func failedRefresh() {
        var state = RefreshCoordinatorState(maxRefreshes: 3, window: 60)
        _ = state.unauthorized(sent: "A", current: "A", now: t0)
        state.refreshFailed()
        #expect(state.retired.isEmpty)
        #expect(state.unauthorized(sent: "A", current: "A", now: t0) == .startRefresh)
    }

    @Test("The loop guard allows N refreshes per window, then refuses until the window passes")
    func loopGuard() {
        var state = RefreshCoordinatorState(maxRefreshes: 2, window: 60)
        #expect(state.unauthorized(sent: "A", current: "A", now: t0) == .startRefresh)
        state.refreshSucceeded()
        #expect(state.unauthorized(sent: "B", current: "B", now: t0.addingTimeInterval(1)) == .startRefresh)
        state.refreshSucceeded()
        #expect(state.unauthorized(sent: "C", current: "C", now: t0.addingTimeInterval(2)) == .refuseLimitExceeded)
        #expect(state.unauthorized(sent: "C", current: "C", now: t0.addingTimeInterval(60)) == .startRefresh)
    }

    @Test("A wall clock set back (an NTP step, a user changing the time) does not hold the loop guard shut")
    func clockSetBack() {
        var state = RefreshCoordinatorState(maxRefreshes: 2, window: 60)
        let later = t0.addingTimeInterval(86_400)
        #expect(state.unauthorized(sent: "A", current: "A", now: later) == .startRefresh)
        state.refreshSucceeded()
        #expect(state.unauthorized(sent: "B", current: "B", now: later) == .startRefresh)
        state.refreshSucceeded()
        #expect(state.unauthorized(sent: "C", current: "C", now: later) == .refuseLimitExceeded)
        // The clock goes back a day: the refreshes "in the future" no longer count; the guard
        // still counts what happens from then on.
        #expect(state.unauthorized(sent: "C", current: "C", now: t0) == .startRefresh)
        state.refreshSucceeded()
        #expect(state.unauthorized(sent: "D", current: "D", now: t0.addingTimeInterval(1)) == .startRefresh)
        state.refreshSucceeded()
        #expect(state.unauthorized(sent: "E", current: "E", now: t0.addingTimeInterval(2)) == .refuseLimitExceeded)
    }
}

@Suite("The refresh state machine when a refresh hands out a credential again")
struct RefreshCoordinatorRenewalTests {
    let t0 = Date(timeIntervalSince1970: 0)

    @Test("A refresh that keeps the credential does not retire it: a later 401 for it refreshes again")
    func sameCredential() {
        var state = RefreshCoordinatorState(maxRefreshes: 3, window: 60)
        let before = state.finishedRefreshes
        #expect(state.unauthorized(sent: "A", current: "A", sentAtEpoch: before, now: t0) == .startRefresh)
        state.refreshSucceeded(newCredential: "A")
        #expect(state.retired.isEmpty)
        // Sent before that refresh ended: settled by a retry, no second refresh.
        #expect(
            state.unauthorized(sent: "A", current: "A", sentAtEpoch: before, now: t0) == .retryWithCurrentCredentials)
        // Sent after it: the server rejects the renewed credential, so it is refreshed again.
        let after = state.finishedRefreshes
        #expect(state.unauthorized(sent: "A", current: "A", sentAtEpoch: after, now: t0) == .startRefresh)
        #expect(state.refreshStarts.count == 2)
    }

    @Test("A credential handed out again after rotation (A, B, A) is no longer retired")
    func cycledCredential() {
        var state = RefreshCoordinatorState(maxRefreshes: 5, window: 60)
        _ = state.unauthorized(sent: "A", current: "A", sentAtEpoch: state.finishedRefreshes, now: t0)
        state.refreshSucceeded(newCredential: "B")
        #expect(state.retired == ["A"])
        _ = state.unauthorized(sent: "B", current: "B", sentAtEpoch: state.finishedRefreshes, now: t0)
        state.refreshSucceeded(newCredential: "A")
        #expect(state.retired == ["B"])
        #expect(
            state.unauthorized(sent: "A", current: "A", sentAtEpoch: state.finishedRefreshes, now: t0) == .startRefresh)
    }

    @Test("Without an epoch, a 401 for a renewed credential refreshes; an unknown new credential retires the old")
    func unknowns() {
        var state = RefreshCoordinatorState(maxRefreshes: 3, window: 60)
        _ = state.unauthorized(sent: "A", current: "A", now: t0)
        state.refreshSucceeded(newCredential: "A")
        #expect(state.unauthorized(sent: "A", current: "A", now: t0) == .startRefresh)
        state.refreshSucceeded()
        #expect(state.retired == ["A"])
        #expect(state.finishedRefreshes == 2)
        state.refreshFailed()
        #expect(state.finishedRefreshes == 3)
    }

    @Test("A negative window means the default 60 s: the loop guard still refuses (it was 0, the guard off)")
    func negativeWindow() {
        var state = RefreshCoordinatorState(maxRefreshes: 1, window: -60)
        #expect(state.window == 60)
        #expect(state.unauthorized(sent: "A", current: "A", now: t0) == .startRefresh)
        state.refreshFailed()
        #expect(state.unauthorized(sent: "A", current: "A", now: t0.addingTimeInterval(1)) == .refuseLimitExceeded)
    }

    @Test("A credential the owner vouches for (the app replaced it) joins a refresh in flight, else is retried")
    func vouchedFor() {
        var state = RefreshCoordinatorState(maxRefreshes: 3, window: 60)
        #expect(state.unauthorized(sent: "A", current: "A", now: t0) == .startRefresh)
        #expect(state.unauthorized(sent: "X", current: "A", now: t0, vouchedFor: true) == .joinRefresh)
        #expect(state.unauthorized(sent: "X", current: "A", now: t0) == .notIssued)
        state.refreshSucceeded(newCredential: "B")
        #expect(state.unauthorized(sent: "X", current: "B", now: t0, vouchedFor: true) == .retryWithCurrentCredentials)
        #expect(state.refreshStarts.count == 1)
    }
}
