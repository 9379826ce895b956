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

    /// The effective preferences for the stored (partial) object.
    public init(stored: [String: JSONValue]) {
        colorScheme = stored["color_scheme"]?.stringValue
        accentColor = stored["accent_color"]?.stringValue ?? "blue"
        fontSize = stored["font_size"]?.stringValue ?? "medium"
        notificationEnabled = stored["notification_enabled"]?.boolValue ?? false
        notificationTime = stored["notification_time"]?.stringValue
    }

    /// Merges a client's `preferences` patch into the stored object, field by field: a value sets the field,
    /// `null` resets it to its default, an absent field stays, unknown keys are ignored (and not stored).
    /// - Throws: `QuoteVaultError.validation` naming each invalid field (`preferences.<key>`).
    public static func merge(_ patch: [String: JSONValue], into stored: [String: JSONValue]) throws -> [String: JSONValue] {
        var result = stored.filter { keys.contains($0.key) }
        var errors: [FieldError] = []
        func invalid(_ key: String, _ message: String) { errors.append(FieldError(field: "preferences.\(key)", message: message)) }
        for key in keys {
            guard let value = patch[key] else { continue }
            if value == .null {
                result.removeValue(forKey: key)
                continue
            }
            switch key {
            case "color_scheme":
                guard let text = value.stringValue, colorSchemes.contains(text) else { invalid(key, "must be light, dark or null"); continue }
                result[key] = value
            case "accent_color":
                guard let text = value.stringValue, accentColors.contains(text) else {
                    invalid(key, "must be one of \(accentColors.joined(separator: ", "))"); continue
                }
                result[key] = value
            case "font_size":
                guard let text = value.stringValue, fontSizes.contains(text) else {
                    invalid(key, "must be one of \(fontSizes.joined(separator: ", "))"); continue
                }
                result[key] = value
            case "notification_enabled":
                guard value.boolValue != nil else { invalid(key, "must be true or false"); continue }
                result[key] = value
            default:  // notification_time
                guard let text = value.stringValue, isClockTime(text) else { invalid(key, "must be HH:mm (24-hour) or null"); continue }
                result[key] = value
            }
        }
        guard errors.isEmpty else { throw QuoteVaultError.validation(errors) }
        return result
    }

    /// `HH:mm`, 00:00 to 23:59.
    static func isClockTime(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            let hour = Int(parts[0]), let minute = Int(parts[1])
        else { return false }
        return (0..<24).contains(hour) && (0..<60).contains(minute)
    }
}
