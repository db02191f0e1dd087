#if canImport(CCurl)
    import CCurl
    import Foundation

    /// One libcurl multi handle driven by one thread: every request of a ``CurlTransport`` runs
    /// here, sharing connections (keep-alive, HTTP/2 multiplexing) — no thread per request.
    ///
    /// Other threads talk to the loop only through `inbox` and `curl_multi_wakeup`, which libcurl
    /// documents as callable from any thread.
    ///
    /// The loop is also a `TaskExecutor` (``CurlTransport/executor``): jobs enqueued on it run on
    /// the loop thread between rounds of I/O (see ``runJobs()``). Once the loop stops, jobs go
    /// to the global concurrent executor instead, so a task that prefers a stopped loop still runs.
    final class CurlEventLoop: @unchecked Sendable {
        // @unchecked: `multi` is used by the loop thread only, except `curl_multi_wakeup`
        // (thread-safe by contract) and `curl_multi_cleanup` in `deinit`, when no thread can
        // reach the loop any more; `running` is touched by the loop thread only; `inbox` is locked.
        private struct Inbox {
            var additions: [CurlEasyRequest] = []
            // Requests, not identifiers: holding them keeps their addresses (and pooled handles)
            // from being reused by a newer request before the loop acts on the command.
            var cancellations: [CurlEasyRequest] = []
            /// Transfer numbers, not requests: a stream buffer asks for its resumption without
            /// holding its request (see ``CurlStreamResumer``).
            var resumptions: [UInt64] = []
            /// Jobs of tasks that prefer this loop as their executor, in the order enqueued.
            var jobs: [UnownedJob] = []
            var stopping = false
            /// Whether the loop is in (or about to enter) `curl_multi_poll`; only then does a
            /// command need `curl_multi_wakeup`. A loop that is awake reads the inbox anyway.
            var polling = false
            var wakeupSent = false

            var isEmpty: Bool {
                additions.isEmpty && cancellations.isEmpty && resumptions.isEmpty && jobs.isEmpty && !stopping
            }

            /// Whether the caller that just queued a command must wake the loop.
            mutating func needsWakeup() -> Bool {
                guard polling, !wakeupSent else { return false }
                wakeupSent = true
                return true
            }
        }

        private let multi: UnsafeMutableRawPointer
        private let inbox = Locked(Inbox())
        /// The transfers in the multi handle, by easy handle.
        private var running: [UnsafeMutableRawPointer: CurlEasyRequest] = [:]
        /// The most transfers in the multi handle at once; see ``defaultMaxRunningTransfers``.
        let maxRunningTransfers: Int
        /// Submitted transfers waiting for a slot, oldest first (from `waitingHead` on).
        private var waiting: [CurlEasyRequest] = []
        private var waitingHead = 0
        /// When ``expireWaitingTransfers()`` last scanned the queue (coarse clock).
        fileprivate var lastQueueScanNanos: UInt64 = 0
        /// When ``expireStalledTransfers()`` last scanned the running transfers (coarse clock).
        fileprivate var lastRunningScanNanos: UInt64 = 0

        /// 1,024: transfers beyond it wait here, in order, for one to end. In libcurl 7.88 each
        /// `curl_multi_remove_handle` walks the connection cache (or, with a connection cap,
        /// libcurl's own queue of waiting handles), so handing it 10,000 transfers at once made
        /// every one cost O(n): `gentle-bench --scale` ran 10,000 in flight at 359 requests/s
        /// against 3,473 for 1,000, 58% of the time in `curl_multi_remove_handle`. Below the cap
        /// nothing changes.
        static let defaultMaxRunningTransfers = 1024
        private let stopped = DispatchSemaphore(value: 0)
        /// The loop thread's identity, set by the thread before its first round.
        private let loopThread = Locked<pthread_t?>(nil)

        /// Starts the loop thread.
        ///
        /// - Parameters:
        ///   - maxConnectionsPerHost: 0 for libcurl's default (no limit).
        ///   - maxRunningTransfers: The most transfers handed to libcurl at once (at least 1);
        ///     ``defaultMaxRunningTransfers`` by default.
        init(maxConnectionsPerHost: Int, maxRunningTransfers: Int = defaultMaxRunningTransfers) throws {
            self.maxRunningTransfers = max(1, maxRunningTransfers)
            CurlGlobal.ensureInitialized()
            guard let multi = curl_multi_init() else {
                throw TransportError(.other, url: nil, message: "libcurl could not create a multi handle.")
            }
            self.multi = multi
            _ = gn_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
            if maxConnectionsPerHost > 0 {
                _ = gn_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maxConnectionsPerHost)
            }
            ThreadName.start("gentle.curl") { [self] in
                loopThread.withLock { $0 = pthread_self() }
                run()
                stopped.signal()
            }
        }

        deinit {
            // Here, not when the loop stops: a job may still be enqueued after that (by a task
            // that prefers this loop), and its `curl_multi_wakeup` needs the handle.
            curl_multi_cleanup(multi)
        }

        /// Hands `request` to the loop.
        func submit(_ request: CurlEasyRequest) {
            enqueue { $0.additions.append(request) }
        }

        /// Asks the loop to abandon `request` (its caller was already resumed).
        func cancel(_ request: CurlEasyRequest) {
            enqueue { $0.cancellations.append(request) }
        }

        /// Asks the loop to resume the transfer numbered `transferNumber`, paused by backpressure;
        /// a number that no longer runs is ignored.
        func resumeTransfer(number transferNumber: UInt64) {
            enqueue { $0.resumptions.append(transferNumber) }
        }

        /// Queues a command, and wakes the loop if it is polling.
        private func enqueue(_ command: (inout Inbox) -> Void) {
            let wake = inbox.withLock { inbox in
                command(&inbox)
                return inbox.needsWakeup()
            }
            if wake { curl_multi_wakeup(multi) }
        }

        /// Stops the loop, failing anything still running, and waits for the thread; called on
        /// the loop thread itself (by a job that released the last reference to the transport),
        /// it returns at once and the loop stops after the current batch of jobs.
        func shutdown() {
            let alreadyStopping = inbox.withLock { inbox -> Bool in
                defer { inbox.stopping = true }
                return inbox.stopping
            }
            guard !alreadyStopping else { return }
            if let thread = loopThread.withLock({ $0 }), pthread_equal(thread, pthread_self()) != 0 { return }
            curl_multi_wakeup(multi)
            stopped.wait()
        }

        /// Runs `job` on the loop thread at the start of the loop's next round (waking it if it
        /// sleeps); once the loop is stopping, on the global concurrent executor instead.
        private func accept(_ job: UnownedJob) {
            let (accepted, wake) = inbox.withLock { inbox -> (Bool, Bool) in
                guard !inbox.stopping else { return (false, false) }
                inbox.jobs.append(job)
                return (true, inbox.needsWakeup())
            }
            if wake { curl_multi_wakeup(multi) }
            if !accepted { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
        }

        /// Runs the jobs enqueued so far and those they enqueue, up to `maxJobBatchesPerRound`
        /// batches: a request's work hops through several jobs in a row, and a round of I/O
        /// between each (a `curl_multi_perform` over every transfer) made it 20–25% slower than
        /// without the preference; the cap keeps a task that re-enqueues itself forever (a loop of
        /// `Task.yield()`) from starving the transfers.
        private func runJobs() {
            let executor = asUnownedTaskExecutor()
            for _ in 0..<Self.maxJobBatchesPerRound {
                let jobs = takeJobs()
                if jobs.isEmpty { return }
                for job in jobs { job.runSynchronously(on: executor) }
            }
        }

        /// The jobs in the inbox, which is left without any.
        private func takeJobs() -> [UnownedJob] {
            inbox.withLock { inbox -> [UnownedJob] in
                guard !inbox.jobs.isEmpty else { return [] }
                defer { inbox.jobs.removeAll(keepingCapacity: true) }
                return inbox.jobs
            }
        }

        /// See ``runJobs()``.
        static let maxJobBatchesPerRound = 64

        private func run() {
            while true {
                runJobs()
                let (additions, cancellations, resumptions, stopping) = inbox.withLock { inbox in
                    defer {
                        inbox.additions.removeAll()
                        inbox.cancellations.removeAll()
                        inbox.resumptions.removeAll()
                    }
                    return (inbox.additions, inbox.cancellations, inbox.resumptions, inbox.stopping)
                }
                for request in additions {
                    if request.isEnded || cancellations.contains(where: { $0 === request }) {
                        request.cleanup()
                        continue
                    }
                    request.queued()
                    waiting.append(request)
                }
                if !cancellations.isEmpty, waitingHead < waiting.count {
                    // A cancelled transfer still waiting for a slot gives back its handle and
                    // descriptors now (its caller was already resumed).
                    let cancelled = Set(cancellations.map(ObjectIdentifier.init))
                    var kept: [CurlEasyRequest] = []
                    for request in waiting[waitingHead...] {
                        if cancelled.contains(ObjectIdentifier(request)) {
                            request.cleanup()
                        } else {
                            kept.append(request)
                        }
                    }
                    waiting = kept
                    waitingHead = 0
                }
                startWaitingTransfers()
                if !resumptions.isEmpty {
                    let wanted = Set(resumptions)
                    var failed: [(CurlEasyRequest, CURLcode)] = []
                    for request in running.values where wanted.contains(request.transferNumber) {
                        request.resuming()
                        // Resuming delivers what libcurl held back while paused, here: a write
                        // callback that refuses it (the stream's byte limit crossed) makes this
                        // return an error, and libcurl neither ends the transfer nor calls again.
                        // Unfinished, the stream's reader waited for the idle timeout.
                        let code = curl_easy_pause(request.handle, CURLPAUSE_CONT)
                        if code != CURLE_OK { failed.append((request, code)) }
                    }
                    for (request, code) in failed where running[request.handle] === request {
                        running[request.handle] = nil
                        curl_multi_remove_handle(multi, request.handle)
                        request.finish(code)
                        request.cleanup()
                    }
                }
                for request in cancellations where running[request.handle] === request {
                    running[request.handle] = nil
                    curl_multi_remove_handle(multi, request.handle)
                    request.cleanup()
                }
                if stopping {
                    for request in running.values {
                        curl_multi_remove_handle(multi, request.handle)
                        request.abandon(
                            TransportError(
                                .connectionLost, url: request.request.url, message: "The transport was shut down."))
                        request.cleanup()
                    }
                    running.removeAll()
                    for request in waiting[waitingHead...] {
                        request.abandon(
                            TransportError(
                                .connectionLost, url: request.request.url, message: "The transport was shut down."))
                        request.cleanup()
                    }
                    waiting.removeAll()
                    waitingHead = 0
                    // Jobs enqueued before the loop saw `stopping` (no more come: `accept` sends
                    // them elsewhere now) run on the global executor, with those the failed
                    // transfers' callers enqueued above.
                    for job in takeJobs() { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
                    return
                }

                var active: Int32 = 0
                curl_multi_perform(multi, &active)
                var queued: Int32 = 0
                while let message = curl_multi_info_read(multi, &queued) {
                    guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle else {
                        continue
                    }
                    let code = gn_message_result(message)
                    guard let request = running.removeValue(forKey: handle) else { continue }
                    curl_multi_remove_handle(multi, handle)
                    request.finish(code)
                    request.cleanup()
                }
                // Slots freed by finished transfers go to waiting ones before the loop sleeps
                // (libcurl's timer then makes the poll return at once for them).
                startWaitingTransfers()
                expireWaitingTransfers()
                expireStalledTransfers()
                // Sleep only if nothing arrived meanwhile; commands queued from now on wake us.
                let sleep = inbox.withLock { inbox -> Bool in
                    guard inbox.isEmpty else { return false }
                    inbox.polling = true
                    return true
                }
                if sleep {
                    var ready: Int32 = 0
                    curl_multi_poll(multi, nil, 0, 1000, &ready)
                    inbox.withLock { inbox in
                        inbox.polling = false
                        inbox.wakeupSent = false
                    }
                }
            }
        }
    }

    extension CurlEventLoop {
        /// Fails the transfers that waited for a slot longer than their timeout (all slots held
        /// by long-lived streams, or streams held and never read). At most one scan of the
        /// queue every 250 ms: the loop wakes at least once a second and on every event, and
        /// the queue may hold thousands. Loop thread only.
        fileprivate func expireWaitingTransfers() {
            guard waitingHead < waiting.count else { return }
            let now = CurlEasyRequest.queueClockNanoseconds
            guard now &- lastQueueScanNanos >= 250_000_000 else { return }
            lastQueueScanNanos = now
            var kept: [CurlEasyRequest] = []
            kept.reserveCapacity(waiting.count - waitingHead)
            for request in waiting[waitingHead...] {
                if request.isEnded || request.queueWaitExpired(now: now, runningTransfers: running.count) {
                    request.cleanup()
                } else {
                    kept.append(request)
                }
            }
            waiting = kept
            waitingHead = 0
        }

        /// Fails the running transfers libcurl has stopped serving past their deadlines (see
        /// ``CurlEasyRequest/stallExpired(now:)``). At most one scan every 250 ms. Loop thread only.
        fileprivate func expireStalledTransfers() {
            guard !running.isEmpty else { return }
            let now = CurlEasyRequest.queueClockNanoseconds
            guard now &- lastRunningScanNanos >= 250_000_000 else { return }
            lastRunningScanNanos = now
            var expired: [CurlEasyRequest] = []
            for request in running.values where request.stallExpired(now: now) { expired.append(request) }
            for request in expired where running[request.handle] === request {
                running[request.handle] = nil
                curl_multi_remove_handle(multi, request.handle)
                request.cleanup()
            }
        }

        /// Hands waiting transfers to libcurl, oldest first, while slots are free. Loop thread only.
        fileprivate func startWaitingTransfers() {
            // Called on every wake and completion; most find nothing waiting.
            if waitingHead == waiting.count, waitingHead == 0 { return }
            while running.count < maxRunningTransfers, waitingHead < waiting.count {
                let request = waiting[waitingHead]
                waitingHead += 1
                if request.isEnded {
                    request.cleanup()
                    continue
                }
                request.submitted()
                // Refused (out of memory, in practice), the transfer would sit in `running` and
                // never finish: its caller gets the error now.
                let added = curl_multi_add_handle(multi, request.handle)
                guard added == CURLM_OK else {
                    request.abandon(
                        TransportError(
                            .other, url: request.request.url,
                            message: "libcurl could not start the transfer (multi error \(added.rawValue))."))
                    request.cleanup()
                    continue
                }
                running[request.handle] = request
            }
            if waitingHead == waiting.count {
                waiting.removeAll(keepingCapacity: waiting.count <= 4096)
                waitingHead = 0
            } else if waitingHead > 4096, waitingHead * 2 > waiting.count {
                waiting.removeFirst(waitingHead)
                waitingHead = 0
            }
        }
    }

    extension CurlEventLoop: TaskExecutor {
        /// Runs `job` on the loop thread (see the type's documentation).
        func enqueue(_ job: consuming ExecutorJob) {
            accept(UnownedJob(job))
        }
    }

    /// `curl_global_init`, once per process.
    enum CurlGlobal {
        private static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK

        static func ensureInitialized() {
            _ = initialized
        }
    }

    /// How a stream buffer asks for its paused transfer to be resumed: the loop, weakly, and
    /// the transfer's number. No closure and no request, so no cycle can form through it.
    struct CurlStreamResumer: TransferResuming {
        weak var loop: CurlEventLoop?
        let transferNumber: UInt64

        func resume() {
            loop?.resumeTransfer(number: transferNumber)
        }
    }
#endif
