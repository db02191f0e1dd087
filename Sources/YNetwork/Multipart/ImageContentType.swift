import Foundation

/// The image MIME types Y-Network names, for a ``MultipartFile``'s `mimeType`.
public enum ImageContentType: Sendable, Equatable, CaseIterable {
    /// `image/jpg` (a legacy spelling some servers expect).
    case jpg
    /// `image/jpeg`.
    case jpeg
    /// `image/png`.
    case png
    /// `image/gif`.
    case gif

    /// The MIME type, such as `image/png`.
    public var value: String {
        switch self {
        case .jpg: "image/jpg"
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .gif: "image/gif"
        }
    }
}
