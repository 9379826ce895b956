/// Where an audited request came from: the client's address (as `TRUSTED_PROXIES` resolves it) and its
/// User-Agent, cut to a length the log can hold.
public struct AuditClient: Sendable, Equatable {
    public static let maximumUserAgentLength = 512

    public let address: String
    public let userAgent: String

    public init(address: String, userAgent: String?) {
        self.address = address
        self.userAgent = String((userAgent ?? "").prefix(Self.maximumUserAgentLength))
    }
}
