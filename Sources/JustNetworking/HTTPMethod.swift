/// The HTTP method of a ``Route``, as JustNetworking names them.
///
/// This is JustNetworking's own enum, separate from `GentleNetworking.HTTPMethod`; a file that
/// imports both modules spells it `JustNetworking.HTTPMethod`. The raw value is the method token
/// sent on the wire.
public enum HTTPMethod: String, Sendable, CaseIterable {
    /// `GET`.
    case get = "GET"
    /// `POST`.
    case post = "POST"
    /// `PUT`.
    case put = "PUT"
    /// `DELETE`.
    case delete = "DELETE"
    /// `PATCH`.
    case patch = "PATCH"
    /// `OPTIONS` (named `option`, as in JustNetworking).
    case option = "OPTIONS"

    /// The method token sent on the wire, such as `GET`: the raw value, under JustNetworking's name.
    public var value: String {
        rawValue
    }
}
