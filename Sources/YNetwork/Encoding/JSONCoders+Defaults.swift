import Foundation
import GentleNetworking

extension JSONDecoder {
    private static let sharedDefault = Locked(JSONDecoder())

    /// The decoder ``JSONDataParserFactory/init()`` uses: a plain `JSONDecoder()` unless you
    /// replace it.
    ///
    /// As in Y-Network it is one shared instance, and assigning a new one changes the decoder of
    /// every `JSONDataParserFactory()` made afterwards. Unlike Y-Network's stored `static var`
    /// (which Swift 6 rejects as unsafe global state), reads and writes go through a lock.
    public static var defaultDecoder: JSONDecoder {
        get { sharedDefault.current }
        set { sharedDefault.withLock { $0 = newValue } }
    }
}

extension JSONEncoder {
    /// The encoder ``JSONDataParserFactory/init()`` uses: a new `JSONEncoder` with
    /// `.prettyPrinted` output on every call, as in Y-Network (other options keep their
    /// defaults, such as `.deferredToDate` dates).
    public static var defaultEncoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .prettyPrinted
        return encoder
    }
}
