import Foundation

/// The API's JSON conventions: RFC 3339 UTC timestamps with milliseconds, keys as each type declares them.
public enum JSONCoding {
    /// Encodes `value`; dates become `2026-11-22T09:17:23.123Z`.
    public static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]  // stable bytes for equal values
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamp.format(date))
        }
        return Array(try encoder.encode(value))
    }

    /// Decodes a request body, telling malformed JSON (`400 invalid_json`) from well-formed JSON of the wrong
    /// shape (`422 validation_failed`, naming the field).
    public static func decodeBody<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws(HTTPError) -> T {
        guard !containsEscapedNUL(bytes) else {
            throw .invalidJSON("Strings must not contain NUL characters (\\u0000)")
        }
        let data = Data(bytes)
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let error as DecodingError {
            throw mapDecodingError(error, data: data)
        } catch {
            throw .invalidJSON()
        }
    }

    /// True when a JSON string holds `\u0000`: libpq sends text as C strings, so the value would be stored cut
    /// short at the NUL. (A raw NUL byte is not valid JSON and fails decoding anyway.)
    static func containsEscapedNUL(_ bytes: [UInt8]) -> Bool {
        let escape = Array("u0000".utf8)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            guard bytes[index] == UInt8(ascii: "\\") else {
                index += 1
                continue
            }
            // An escape: `\u0000` is the NUL, any other escape (`\\` included) is skipped whole.
            if bytes[(index + 1)...].starts(with: escape) { return true }
            index += 2
        }
        return false
    }

    private static func mapDecodingError(_ error: DecodingError, data: Data) -> HTTPError {
        func fieldName(_ path: [any CodingKey]) -> String {
            path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
                .replacingOccurrences(of: ".[", with: "[")
        }
        switch error {
        case .dataCorrupted(let context):
            // A corrupted value at the root means the bytes are not JSON at all.
            if context.codingPath.isEmpty, (try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)) == nil {
                return .invalidJSON()
            }
            return .validation(field: fieldName(context.codingPath).nonEmpty ?? "body", "is invalid")
        case .keyNotFound(let key, let context):
            return .validation(field: fieldName(context.codingPath + [key]), "is required")
        case .valueNotFound(_, let context):
            return .validation(field: fieldName(context.codingPath).nonEmpty ?? "body", "must not be null")
        case .typeMismatch(let type, let context):
            return .validation(field: fieldName(context.codingPath).nonEmpty ?? "body", "must be \(describe(type))")
        @unknown default:
            return .validation(field: "body", "is invalid")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "a boolean"
        case is Int.Type, is Double.Type: return "a number"
        default: return type == [String: Any].self ? "an object" : "of another type"
        }
    }
}

extension String {
    fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}

/// RFC 3339 timestamps in UTC with milliseconds, without Foundation's slow date formatters.
public enum Timestamp {
    public static func format(_ date: Date) -> String {
        let totalMilliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let milliseconds = Int(((totalMilliseconds % 1000) + 1000) % 1000)
        var seconds = time_t((totalMilliseconds - Int64(milliseconds)) / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        // "YYYY-MM-DDTHH:MM:SS.mmmZ", written digit by digit: this runs for every logged request.
        var bytes = [UInt8](repeating: 0, count: 24)
        func put(_ value: Int, at offset: Int, digits: Int) {
            var value = value
            for index in stride(from: offset + digits - 1, through: offset, by: -1) {
                bytes[index] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
        }
        put(Int(parts.tm_year) + 1900, at: 0, digits: 4)
        put(Int(parts.tm_mon) + 1, at: 5, digits: 2)
        put(Int(parts.tm_mday), at: 8, digits: 2)
        put(Int(parts.tm_hour), at: 11, digits: 2)
        put(Int(parts.tm_min), at: 14, digits: 2)
        put(Int(parts.tm_sec), at: 17, digits: 2)
        put(milliseconds, at: 20, digits: 3)
        for (offset, character) in [(4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":"), (19, "."), (23, "Z")] as [(Int, Unicode.Scalar)] {
            bytes[offset] = UInt8(ascii: character)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension Request {
    /// Decodes the JSON body. A body with another media type is `415`; an empty body decodes as `{}`.
    public func decodeJSON<T: Decodable>(_ type: T.Type = T.self) throws(HTTPError) -> T {
        if let mediaType, mediaType != "application/json", !mediaType.hasSuffix("+json") {
            throw .unsupportedMediaType()
        }
        return try JSONCoding.decodeBody(T.self, from: body.isEmpty ? Array("{}".utf8) : body)
    }
}
