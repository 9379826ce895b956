/// URL-safe base64 without padding (RFC 4648 §5), as used in JWTs and opaque tokens.
public enum Base64URL {
    /// Encodes `bytes` with the `-`/`_` alphabet and no `=` padding.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        UnpaddedBase64.url.encode(bytes)
    }

    /// Decodes canonical unpadded base64url; nil for any other input, including
    /// padding, whitespace, the `+`/`/` alphabet, or non-zero trailing bits.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        UnpaddedBase64.url.decode(text.utf8)
    }

    // The same for the common concrete types. A generic call from another module is not specialised: it looks up
    // type metadata at run time, which cost a cursor page about a microsecond per call.

    public static func encode(_ bytes: [UInt8]) -> String {
        UnpaddedBase64.url.encode(bytes)
    }

    public static func decode(_ text: String) -> [UInt8]? {
        UnpaddedBase64.url.decode(text.utf8)
    }
}
