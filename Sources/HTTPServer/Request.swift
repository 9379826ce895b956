import Failures
import Foundation
import Synchronization

/// One HTTP request, fully read. Handlers get it after the body arrived within its route's size limit.
public struct Request: Sendable {
    public let method: HTTPMethod
    /// The path without the query string, percent-decoded by libmicrohttpd.
    public let path: String
    /// Query arguments in order of appearance, decoded.
    public let query: [(name: String, value: String)]
    public let headers: HTTPHeaders
    public let body: [UInt8]
    /// Values of the route's `{name}` segments.
    public internal(set) var pathParameters: [String: String]
    /// The route pattern that matched, e.g. `/v1/quotes/{id}`, for logs and metrics.
    public internal(set) var routePattern: String
    /// The client's `X-Request-Id` when acceptable, else a new one; echoed in the response.
    public let requestID: String
    /// The peer's IP address as text (empty when unknown).
    public let clientAddress: String
    /// Who the request acts as, as the route's `Authentication` established it once (nil for `none`).
    public internal(set) var caller: (any Sendable)?
    /// The account the credentials name (`Verified.account`), known from the headers; nil when anonymous.
    public internal(set) var account: String?
    /// The address the connection came from: the client's, or a trusted proxy's that forwarded it.
    public let peerAddress: String

    public init(
        method: HTTPMethod, path: String, query: [(name: String, value: String)] = [], headers: HTTPHeaders = [:],
        body: [UInt8] = [], pathParameters: [String: String] = [:], routePattern: String = "",
        requestID: String = RequestID.generate(), clientAddress: String = "", peerAddress: String? = nil
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.pathParameters = pathParameters
        self.routePattern = routePattern
        self.requestID = requestID
        self.clientAddress = clientAddress
        self.peerAddress = peerAddress ?? clientAddress
    }

    /// The caller as the type the route's authentication gives; a route declared without one is a bug.
    public func caller<Caller: Sendable>(_ type: Caller.Type = Caller.self) throws -> Caller {
        guard let caller = caller as? Caller else { throw Failure.internal }
        return caller
    }

    /// The first value of the query argument `name`.
    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }

    /// The value of the path segment `{name}`; the router guarantees it exists for the matched route.
    public func pathParameter(_ name: String) -> String {
        guard let value = pathParameters[name] else {
            preconditionFailure("route \(routePattern) has no parameter {\(name)}")
        }
        return value
    }

    /// The bearer token of the `Authorization` header, if well-formed.
    public var bearerToken: String? {
        guard let value = headers["Authorization"] else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }

    /// The media type of the body without parameters, lower-cased (`application/json`).
    public var mediaType: String? {
        guard let value = headers["Content-Type"] else { return nil }
        let type = value.split(separator: ";", maxSplits: 1).first.map(String.init) ?? value
        return type.trimmingCharacters(in: .whitespaces).lowercased()
    }
}

/// Request identifiers: echo a client's safe one, or make one.
public enum RequestID {
    /// Accepts 1–128 characters from `[A-Za-z0-9._-]`, the contract's rule for client ids.
    public static func isAcceptable(_ candidate: String) -> Bool {
        let bytes = candidate.utf8
        guard (1...128).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                return true
            default:
                return false
            }
        }
    }

    /// A new id, unique within this process and (with a random per-process prefix) across processes.
    /// A counter rather than fresh randomness per request: ids need uniqueness, not secrecy, and a
    /// `getrandom` call per request showed up in profiles.
    public static func generate() -> String {
        processPrefix.hexDigits + counter.wrappingAdd(1, ordering: .relaxed).newValue.hexDigits
    }

    private static let processPrefix = UInt64.random(in: .min ... .max)
    private static let counter = Atomic<UInt64>(0)
}

extension UInt64 {
    /// The value's 16 lower-case hexadecimal digits (request ids, ETags).
    var hexDigits: String {
        String(unsafeUninitializedCapacity: 16) { buffer in
            for index in 0..<16 {
                let nibble = UInt8((self >> (4 * UInt64(15 - index))) & 0xf)
                buffer[index] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
            }
            return 16
        }
    }
}
