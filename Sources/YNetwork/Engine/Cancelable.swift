import Foundation

/// A transfer that can be cancelled.
public protocol Cancelable: Sendable {
    /// Cancels the transfer; its handler then gets a failure (`URLError(.cancelled)`, as from Y-Network's tasks). Cancelling a
    /// finished transfer does nothing.
    func cancel()
}

/// The ``Cancelable`` that ``NetworkManager`` returns for a transfer: the task running it.
public struct TransferHandle: Cancelable {
    private let task: Task<Void, Never>

    init(_ task: Task<Void, Never>) {
        self.task = task
    }

    /// Cancels the task; the transport stops the transfer at once.
    public func cancel() {
        task.cancel()
    }

    /// Waits until the transfer and its handlers are done (for tests and command-line tools).
    public func wait() async {
        await task.value
    }
}
