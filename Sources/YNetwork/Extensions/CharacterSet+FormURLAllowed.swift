import Foundation

extension CharacterSet {
    /// The characters left unescaped in a query or form component, as in Y-Network:
    /// `urlQueryAllowed` without `+`, `&`, `=`, `/` and `?`.
    ///
    /// ``URLBuilder`` and ``FormURLEncoder`` escape more than this (everything but the RFC 3986
    /// unreserved characters), which servers decode to the same text.
    public static let formUrlAllowed: CharacterSet = CharacterSet.urlQueryAllowed.subtracting(
        CharacterSet(charactersIn: "+&=/?"))
}
