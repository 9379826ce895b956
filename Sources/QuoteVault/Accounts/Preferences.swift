import Foundation

/// The app's theme and notification settings. Only keys a user set are stored; the rest read as defaults.
public struct Preferences: Sendable, Equatable {
    public var colorScheme: String?
    public var accentColor: String
    public var fontSize: String
    public var notificationEnabled: Bool
    public var notificationTime: String?

    public static let colorSchemes = ["light", "dark"]
    public static let accentColors = ["blue", "purple", "orange", "green", "pink"]
    public static let fontSizes = ["small", "medium", "large", "extraLarge"]
    public static let keys = ["color_scheme", "accent_color", "font_size", "notification_enabled", "notification_time"]
    /// The app's Codable model spells the same five keys in camelCase; a stored object may use either spelling.
    public static let camelCaseKeys = [
        "color_scheme": "colorScheme", "accent_color": "accentColor", "font_size": "fontSize",
        "notification_enabled": "notificationEnabled", "notification_time": "notificationTime",
    ]
    /// The largest preferences object a client may store (its JSON text).
    public static let maximumDocumentBytes = 4096

    /// The effective preferences for the stored (partial) object, in either spelling.
    public init(stored: [String: JSONValue]) {
        func value(_ key: String) -> JSONValue? {
            let found = stored[key] ?? stored[Self.camelCaseKeys[key] ?? key]
            return found == .null ? nil : found
        }
        colorScheme = value("color_scheme")?.stringValue
        accentColor = value("accent_color")?.stringValue ?? "blue"
        fontSize = value("font_size")?.stringValue ?? "medium"
        notificationEnabled = value("notification_enabled")?.boolValue ?? false
        notificationTime = value("notification_time")?.stringValue
    }

    /// Why `value` is not acceptable for the preference `key` (snake_case), or nil. `null` means the default.
    static func problem(_ key: String, _ value: JSONValue) -> String? {
        if value == .null { return nil }
        switch key {
        case "color_scheme":
            return value.stringValue.map(colorSchemes.contains) == true ? nil : "must be light, dark or null"
        case "accent_color":
            return value.stringValue.map(accentColors.contains) == true
                ? nil : "must be one of \(accentColors.joined(separator: ", "))"
        case "font_size":
            return value.stringValue.map(fontSizes.contains) == true
                ? nil : "must be one of \(fontSizes.joined(separator: ", "))"
        case "notification_enabled":
            return value.boolValue != nil ? nil : "must be true or false"
        default:  // notification_time
            return value.stringValue.map(isClockTime) == true ? nil : "must be HH:mm (24-hour) or null"
        }
    }

    /// Merges a client's `preferences` patch (`/v1`: snake_case keys) into the stored object, field by field: a
    /// value sets the field (in the spelling already stored, so a client that wrote camelCase reads its own keys
    /// back), `null` resets it to its default, an absent field stays; other keys are ignored.
    /// - Throws: `QuoteVaultError.validation` naming each invalid field (`preferences.<key>`).
    public static func merge(_ patch: [String: JSONValue], into stored: [String: JSONValue]) throws -> [String:
        JSONValue]
    {
        var result = stored
        var errors: [FieldError] = []
        for key in keys {
            guard let value = patch[key] else { continue }
            if let message = problem(key, value) {
                errors.append(FieldError(field: "preferences.\(key)", message: message))
                continue
            }
            let camel = camelCaseKeys[key] ?? key
            let spelling = stored[key] == nil && stored[camel] != nil ? camel : key
            result.removeValue(forKey: key)
            result.removeValue(forKey: camel)
            if value != .null { result[spelling] = value }
        }
        guard errors.isEmpty else { throw QuoteVaultError.validation(errors) }
        return result
    }

    /// A whole preferences object as a client of `/rest/v1` writes it (JSONB: stored as written and read back
    /// identically): each of the five preferences, in either spelling, must have a valid value, and may be
    /// given once; other keys are kept as they are.
    /// - Throws: `QuoteVaultError.validation` naming each invalid field.
    public static func validateDocument(_ document: [String: JSONValue]) throws -> [String: JSONValue] {
        var errors: [FieldError] = []
        for key in keys {
            let camel = camelCaseKeys[key] ?? key
            if document[key] != nil, document[camel] != nil {
                errors.append(
                    FieldError(field: "preferences.\(camel)", message: "is given twice (\(camel) and \(key))"))
            }
            for spelling in [key, camel] {
                if let value = document[spelling], let message = problem(key, value) {
                    errors.append(FieldError(field: "preferences.\(spelling)", message: message))
                }
            }
        }
        if let size = try? JSONEncoder().encode(document).count, size > maximumDocumentBytes {
            errors.append(
                FieldError(field: "preferences", message: "must be at most \(maximumDocumentBytes) bytes of JSON"))
        }
        guard errors.isEmpty else { throw QuoteVaultError.validation(errors) }
        return document
    }

    /// `HH:mm`, 00:00 to 23:59.
    static func isClockTime(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2,
            parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            let hour = Int(parts[0]), let minute = Int(parts[1])
        else { return false }
        return (0..<24).contains(hour) && (0..<60).contains(minute)
    }
}
