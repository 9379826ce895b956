/// GoTrue's `URI_ALLOW_LIST` with its site URL: a recovery link's `redirect_to` is followed only when it starts
/// with an allowed prefix that ends at a boundary (so `https://app.example` does not allow
/// `https://app.example.evil`); anything else goes to the site URL.
public struct RedirectAllowList: Sendable {
    public let siteURL: String
    public let prefixes: [String]

    public init(siteURL: String, prefixes: [String]) {
        self.siteURL = siteURL
        self.prefixes = prefixes.filter { !$0.isEmpty }
    }

    /// `requested` when allowed, else the site URL.
    public func target(_ requested: String?) -> String {
        guard let requested, requested.utf8.count <= 2048, !requested.contains(where: { $0.isNewline || $0 == "\0" }),
            prefixes.contains(where: { allows(requested, prefix: $0) })
        else { return siteURL }
        return requested
    }

    /// `url` fit for a `Location` header: every byte that may not appear raw in a URL (controls, space, DEL,
    /// non-ASCII, `"<>\^`{|}`) percent-encoded, the rest (`%` included, so encoding twice changes nothing) kept.
    public static func percentEncoded(_ url: String) -> String {
        var encoded = ""
        for byte in url.utf8 {
            if byte > 0x20, byte < 0x7F, !"\"<>\\^`{|}".utf8.contains(byte) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += "%" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return encoded
    }

    private func allows(_ url: String, prefix: String) -> Bool {
        guard url.hasPrefix(prefix) else { return false }
        if prefix.hasSuffix("/") || prefix.hasSuffix(":") { return true }
        guard let next = url.dropFirst(prefix.count).first else { return true }
        return "/?#".contains(next)
    }
}
