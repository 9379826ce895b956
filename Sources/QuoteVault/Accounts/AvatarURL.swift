import Foundation

/// What an `avatar_url` a client writes may be: an absolute `http` or `https` URL with a host (a `javascript:` or
/// `data:` URL would run or render wherever an app or a web page shows the avatar), or the path this server itself
/// stores for an uploaded avatar (`/v1/avatars/…`), which a client may write back unchanged. Neither holds a control
/// character or whitespace: a line break would split a header or a log line wherever the URL is echoed. Migration
/// 0066 holds the table to the same characters, whichever door writes.
public enum AvatarURL {
    public static func isAllowed(_ url: String) -> Bool {
        guard !url.unicodeScalars.contains(where: isRefusedCharacter) else { return false }
        if url.hasPrefix("/v1/avatars/") { return true }
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else { return false }
        return true
    }

    /// C0 and C1 controls, DEL, and Unicode whitespace (spaces, tabs, line and paragraph separators).
    static func isRefusedCharacter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control || scalar.properties.isWhitespace
    }

    public static let refusal = FieldError(
        field: "avatar_url", message: "must be an http or https URL without control characters or whitespace")
}
