import Foundation

/// Validation of what people type when they sign up or reset.
public enum Credentials {
    public static let minimumPasswordLength = 8
    public static let maximumPasswordBytes = 1024
    public static let maximumDisplayNameLength = 100

    /// Trimmed and lower-cased; refuses what cannot be an address.
    public static func normaliseEmail(_ email: String) throws -> String {
        let normalised = email.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        let parts = normalised.split(separator: "@", omittingEmptySubsequences: false)
        guard normalised.utf8.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[1].contains("."),
            !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
            !normalised.contains(where: { $0.isWhitespace || $0.isNewline })
        else { throw QuoteVaultError.invalid("email", "must be a valid email address") }
        return normalised
    }

    /// At least 8 characters and at most 1024 bytes in UTF-8. Characters are counted as Unicode code points, as
    /// JSON Schema's `minLength` in the OpenAPI document counts them, so a password the document allows is accepted.
    public static func validatePassword(_ password: String, field: String = "password") throws {
        guard password.unicodeScalars.count >= minimumPasswordLength else {
            throw QuoteVaultError.invalid(field, "must be at least \(minimumPasswordLength) characters")
        }
        guard password.utf8.count <= maximumPasswordBytes else {
            throw QuoteVaultError.invalid(field, "must be at most \(maximumPasswordBytes) bytes")
        }
    }

    /// A display name: at most 100 characters; nil stays nil.
    public static func validateDisplayName(_ name: String?) throws -> String? {
        guard let name else { return nil }
        guard name.count <= maximumDisplayNameLength, name.unicodeScalars.count <= maximumDisplayNameLength else {
            throw QuoteVaultError.invalid("display_name", "must be at most \(maximumDisplayNameLength) characters")
        }
        return name
    }
}
