import Foundation

/// What an `avatar_url` a client writes may be: an absolute `http` or `https` URL with a host (a `javascript:` or
/// `data:` URL would run or render wherever an app or a web page shows the avatar), or the path this server itself
/// stores for an uploaded avatar (`/v1/avatars/…`), which a client may write back unchanged.
public enum AvatarURL {
    public static func isAllowed(_ url: String) -> Bool {
        if url.hasPrefix("/v1/avatars/") { return true }
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else { return false }
        return true
    }

    public static let refusal = FieldError(field: "avatar_url", message: "must be an http or https URL")
}
