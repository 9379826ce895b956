extension HTTPHeaders {
    /// The policy of a stored user object (an avatar): whatever the bytes hold, a browser that opens it runs no
    /// script, loads nothing and treats it as a sandboxed origin; `nosniff` (set on every answer) keeps its type.
    public static let userContentSecurityPolicy = ("Content-Security-Policy", "default-src 'none'; sandbox")

    /// Marks the answer as serving a stored user object (`userContentSecurityPolicy`).
    public mutating func markAsUserContent() {
        set(Self.userContentSecurityPolicy.0, Self.userContentSecurityPolicy.1)
    }
}
