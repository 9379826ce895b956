import Foundation
import XCTest

/// What the Supabase-protocol tests share: the headers a Supabase client sends and JSON helpers.
extension TestApp {
    public var anonKey: String { application.context.configuration.supabaseAnonKey }

    /// `apikey` plus the bearer a signed-in client sends (the anon key before sign-in).
    public func supabaseHeaders(_ user: TestUser? = nil, _ extra: [String: String] = [:]) -> [String: String] {
        ["apikey": anonKey, "Authorization": "Bearer \(user?.accessToken ?? anonKey)"].merging(extra) { $1 }
    }

    /// A JSON request with Supabase headers; `body` may be an object or an array.
    public func supabase(
        _ method: String, _ path: String, as user: TestUser? = nil, body: Any? = nil,
        headers: [String: String] = [:]
    ) throws -> HTTPTestResponse {
        var all = supabaseHeaders(user, headers)
        var bytes: [UInt8]?
        if let body {
            all["Content-Type"] = "application/json"
            bytes = Array(try JSONSerialization.data(withJSONObject: body))
        }
        return try client.send(method, path, headers: all, body: bytes)
    }
}

extension HTTPTestResponse {
    public var jsonArray: [[String: Any]] {
        ((try? JSONSerialization.jsonObject(with: Data(body))) as? [[String: Any]]) ?? []
    }
}
