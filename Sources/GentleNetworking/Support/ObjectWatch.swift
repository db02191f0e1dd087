import Foundation

/// Weak references to the objects the exchanges of one task create, so a leak test can ask which
/// of them are still alive after the streams and requests are done.
///
/// Bind one with `ObjectWatch.$current.withValue(watch) { … }`; the transports' per-exchange
/// objects (``HTTPByteStream``'s state, the stream buffer, libcurl's request, URLSession's call)
/// register themselves when they are made in that task. With none bound (always, outside tests)
/// registering is one task-local read.
package final class ObjectWatch: Sendable {
    /// The watch the objects made in this task register with.
    @TaskLocal package static var current: ObjectWatch?

    private struct Entry {
        weak var object: AnyObject?
        let kind: String
    }

    private let entries = Locked<[Entry]>([])

    package init() {}

    /// Registers `object` (weakly) with the current task's watch, if there is one.
    static func note(_ object: AnyObject, _ kind: String) {
        guard let watch = current else { return }
        watch.entries.withLock { $0.append(Entry(object: object, kind: kind)) }
    }

    /// How many objects of each kind registered, alive or not.
    package var registered: [String: Int] {
        entries.withLock { entries in entries.reduce(into: [:]) { $0[$1.kind, default: 0] += 1 } }
    }

    /// The kinds of the registered objects still alive, one entry per object.
    package var alive: [String] {
        entries.withLock { entries in entries.filter { $0.object != nil }.map(\.kind) }
    }
}
