/// A value that is not `Sendable`, handed from where it is made to the one place that uses it:
/// a caller's handler carried into the task that runs its request, or a decoded response carried
/// from that task to the main queue.
///
/// Y-Network's handler types are plain closures, not `@Sendable` ones, so that a handler may
/// record into the caller's local variables (as tests written for Y-Network do), and its
/// `submit(_:completion:)` takes any `Decodable` response. This box lets such values cross into
/// a task or onto a queue. It is `@unchecked` because nothing is shared: the sender never uses
/// the value again, and ``NetworkManager`` calls a handler only on the queue its documentation
/// names (the main queue for progress and completions, the transfer's task for a download's
/// file), one call at a time.
struct Handoff<Value>: @unchecked Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}
