/// One Server-Sent Event, as the WHATWG HTML event-stream format dispatches it.
public struct ServerSentEvent: Sendable, Hashable {
    /// The event type: the `event:` field, `"message"` when there was none.
    public var event: String
    /// The `data:` fields, joined with `\n`.
    public var data: String
    /// The last event ID in effect when the event was dispatched (sticky across events, as an
    /// `EventSource`'s `lastEventId`), `nil` when the stream has not set one.
    public var id: String?
    /// The reconnection time in milliseconds, when this event's block set one with `retry:`.
    public var retry: Int?

    /// Creates an event.
    public init(event: String = "message", data: String, id: String? = nil, retry: Int? = nil) {
        self.event = event
        self.data = data
        self.id = id
        self.retry = retry
    }
}
