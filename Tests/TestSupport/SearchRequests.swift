import Foundation

extension TestApp {
    /// `GET /v1/quotes/search` for `query` (percent-encoded) of `type`, with `extra` query items (`&page=2`).
    public func search(_ query: String, type: String = "keyword", extra: String = "") throws -> HTTPTestResponse {
        let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        return try client.get("/v1/quotes/search?q=\(encoded)&type=\(type)\(extra)")
    }
}
