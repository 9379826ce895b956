import Foundation
import PGClient

/// Supabase's `user_metadata`: any JSON object the user chooses, bounded in size because every access token
/// carries it.
public enum UserMetadata {
    static let maximumBytes = 4096

    /// The stored form; `validation_failed` on `data` when it is too large.
    public static func encode(_ metadata: [String: JSONValue]) throws -> PGJSON {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = try encoder.encode(metadata)
        guard data.count <= maximumBytes else {
            throw QuoteVaultError.invalid("data", "must be at most \(maximumBytes) bytes of JSON")
        }
        return PGJSON(data: data)
    }
}
