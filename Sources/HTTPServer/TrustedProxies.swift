import Foundation

/// The load balancers in front of this server (`TRUSTED_PROXIES`), whose `X-Forwarded-For` names the client.
///
/// Every per-address limit (login and sign-up throttles, the hashing queue's fair share, concurrent searches) keys
/// on the client's address. Behind HAProxy every request arrives from the proxy's address, so without this all
/// users would share one allowance. Only a trusted peer's header counts: anyone else can write `X-Forwarded-For`.
/// The client is the right-most address in the header that is not itself a trusted proxy (each proxy appends the
/// address it received the connection from; what stands left of it was written by the client and is not believed).
public struct TrustedProxies: Sendable, Equatable {
    public let addresses: Set<String>

    /// - Parameter addresses: IP addresses as the socket reports them (`127.0.0.1`, `::1`); blanks are ignored.
    public init(_ addresses: some Sequence<String>) {
        self.addresses = Set(addresses.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
    }

    public static let none = TrustedProxies([])

    /// The client a request comes from: `peer` itself unless it is a trusted proxy that forwarded an address.
    public func client(peer: String, forwardedFor: String?) -> String {
        guard addresses.contains(peer), let forwardedFor else { return peer }
        let hops = forwardedFor.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() where !addresses.contains(hop) {
            return Self.isAddress(hop) ? hop : peer
        }
        return peer
    }

    /// An IPv4 or IPv6 address in text form (a forged header must not become an arbitrary throttle key).
    public static func isAddress(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }
}
