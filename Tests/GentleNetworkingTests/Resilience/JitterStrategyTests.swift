import Foundation
import GentleNetworking
import Testing

@Suite("Jitter formulas")
struct JitterStrategyTests {
    @Test("Full jitter is uniform in [0, base·2^n], capped")
    func full() {
        let jitter = JitterStrategy.full
        #expect(jitter.delay(attempt: 0, baseDelay: 0.5, maxDelay: 30, previousDelay: nil, randomUnit: 0) == 0)
        #expect(jitter.delay(attempt: 0, baseDelay: 0.5, maxDelay: 30, previousDelay: nil, randomUnit: 1) == 0.5)
        #expect(jitter.delay(attempt: 3, baseDelay: 0.5, maxDelay: 30, previousDelay: nil, randomUnit: 0.5) == 2.0)
        #expect(jitter.delay(attempt: 10, baseDelay: 0.5, maxDelay: 30, previousDelay: nil, randomUnit: 1) == 30)
    }

    @Test("Equal jitter is in [e/2, e]")
    func equal() {
        let jitter = JitterStrategy.equal
        #expect(jitter.delay(attempt: 2, baseDelay: 1, maxDelay: 30, previousDelay: nil, randomUnit: 0) == 2)
        #expect(jitter.delay(attempt: 2, baseDelay: 1, maxDelay: 30, previousDelay: nil, randomUnit: 1) == 4)
        #expect(jitter.delay(attempt: 2, baseDelay: 1, maxDelay: 30, previousDelay: nil, randomUnit: 0.5) == 3)
        #expect(jitter.delay(attempt: 20, baseDelay: 1, maxDelay: 30, previousDelay: nil, randomUnit: 0) == 15)
    }

    @Test("Decorrelated jitter is in [base, 3·previous], capped")
    func decorrelated() {
        let jitter = JitterStrategy.decorrelated
        #expect(jitter.delay(attempt: 0, baseDelay: 1, maxDelay: 30, previousDelay: nil, randomUnit: 0) == 1)
        #expect(jitter.delay(attempt: 0, baseDelay: 1, maxDelay: 30, previousDelay: nil, randomUnit: 1) == 3)
        #expect(jitter.delay(attempt: 4, baseDelay: 1, maxDelay: 30, previousDelay: 5, randomUnit: 0.5) == 8)
        #expect(jitter.delay(attempt: 4, baseDelay: 1, maxDelay: 30, previousDelay: 20, randomUnit: 1) == 30)
    }

    @Test(
        "Every formula stays within its bounds and the cap, for many random values",
        arguments: [JitterStrategy.full, .equal, .decorrelated, .disabled])
    func bounds(jitter: JitterStrategy) {
        var previous: TimeInterval?
        for attempt in 0..<40 {
            for step in 0...20 {
                let unit = Double(step) / 20
                let delay = jitter.delay(
                    attempt: attempt, baseDelay: 0.25, maxDelay: 10, previousDelay: previous, randomUnit: unit)
                let exponential = min(10, 0.25 * pow(2, Double(attempt)))
                #expect(delay >= 0 && delay <= 10)
                switch jitter {
                case .full: #expect(delay <= exponential)
                case .equal: #expect(delay >= exponential / 2 && delay <= exponential)
                case .decorrelated: #expect(delay >= 0.25 && delay <= max(previous ?? 0.25, 0.25) * 3)
                case .disabled: #expect(delay == exponential)
                }
            }
            previous = jitter.delay(
                attempt: attempt, baseDelay: 0.25, maxDelay: 10, previousDelay: previous, randomUnit: 1)
        }
    }

    @Test("Upper bounds grow geometrically until the cap, then stay there")
    func growsAndCaps() {
        let uppers = (0..<8).map {
            JitterStrategy.full.delay(attempt: $0, baseDelay: 0.5, maxDelay: 30, previousDelay: nil, randomUnit: 1)
        }
        #expect(uppers == [0.5, 1, 2, 4, 8, 16, 30, 30])
        #expect(
            JitterStrategy.full.delay(attempt: 5000, baseDelay: 0.5, maxDelay: 30, previousDelay: nil, randomUnit: 1)
                == 30)
    }

    @Test("A NaN random unit counts as 0: every strategy still gives a finite delay within its bounds")
    func nanUnit() {
        for jitter in [JitterStrategy.disabled, .full, .equal, .decorrelated] {
            let delay = jitter.delay(attempt: 2, baseDelay: 1, maxDelay: 10, previousDelay: 1, randomUnit: .nan)
            #expect(delay.isFinite && delay >= 0 && delay <= 10, "\(jitter): \(delay)")
        }
        #expect(
            JitterStrategy.full.delay(attempt: 0, baseDelay: 1, maxDelay: 10, previousDelay: nil, randomUnit: .nan) == 0
        )
    }

    @Test(
        "Any Double as base, cap or previous delay gives a finite delay, never NaN",
        arguments: [
            JitterStrategy.full, .equal, .decorrelated, .disabled,
        ])
    func finiteForAnyDouble(strategy: JitterStrategy) {
        let values: [Double] = [.infinity, -.infinity, .nan, .greatestFiniteMagnitude, -1, 0, 1]
        for base in values {
            for cap in values {
                for unit in [0, 0.5, 1, .nan] as [Double] {
                    let delay = strategy.delay(
                        attempt: 62, baseDelay: base, maxDelay: cap, previousDelay: base, randomUnit: unit)
                    #expect(delay.isFinite && delay >= 0, "\(strategy) \(base) \(cap) \(unit): \(delay)")
                }
            }
        }
    }
}
