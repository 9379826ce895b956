import Foundation
import PGClient

extension TestApp {
    /// Inserts quotes directly (category cycles through the five unless given), newest last; returns their ids
    /// in insertion order.
    @discardableResult
    public func insertQuotes(_ texts: [String], author: String = "Test Author", category: String? = nil) async throws
        -> [UUID]
    {
        let categories = ["motivation", "love", "success", "wisdom", "humor"]
        return try await withConnection { connection in
            var ids: [UUID] = []
            for (index, text) in texts.enumerated() {
                let rows = try connection.query(
                    """
                    INSERT INTO quotes (text, author, category, created_at)
                    VALUES (\(text), \(author), \(category ?? categories[index % 5]), clock_timestamp())
                    RETURNING id
                    """)
                ids.append(try rows[0].decode("id", as: UUID.self))
            }
            return ids
        }
    }
}

extension HTTPTestResponse {
    /// The `items` array of a list envelope.
    public func items() throws -> [[String: Any]] {
        try jsonObject()["items"] as? [[String: Any]] ?? []
    }

    public func errorFields() throws -> [String] {
        (try jsonObject()["errors"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String }
    }
}
