import AuthJWT
import CivilCalendar
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
        // Strict RFC 8259 first: Foundation's decoder accepts some malformed text (a trailing comma).
        guard StrictJSON.isValid(bytes) else { throw .invalidJSON() }
        guard !containsEscapedNUL(bytes) else {
            throw .invalidJSON("Strings must not contain NUL characters (\\u0000)")
        }
        // Any JSON value: read directly (JSONDecoder tries each of its cases and builds an error for every miss).
        if T.self == ClaimValue.self, let value = try? ClaimValue(jsonBytes: bytes) { return value as! T }
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
        /// The path as the client wrote it (`items[2].text`); the body itself at the root.
        func fieldName(_ path: [any CodingKey]) -> String {
            let name = path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
                .replacingOccurrences(of: ".[", with: "[")
            return name.isEmpty ? "body" : name
        }
        switch error {
        case .dataCorrupted(let context):
            // A corrupted value at the root means the bytes are not JSON at all.
            if context.codingPath.isEmpty,
                (try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)) == nil
            {
                return .invalidJSON()
            }
            return .validation(field: fieldName(context.codingPath), "is invalid")
        case .keyNotFound(let key, let context):
            return .validation(field: fieldName(context.codingPath + [key]), "is required")
        case .valueNotFound(_, let context):
            return .validation(field: fieldName(context.codingPath), "must not be null")
        case .typeMismatch(let type, let context):
            return .validation(field: fieldName(context.codingPath), "must be \(describe(type))")
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

/// RFC 3339 timestamps in UTC with milliseconds, without Foundation's slow date formatters.
public enum Timestamp {
    /// The length of `2026-11-22T09:17:23.123Z`.
    public static let length = 24

    public static func format(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(length)
        write(date, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `YYYY-MM-DDTHH:MM:SS.mmmZ` to `bytes`, in one append (a page of quotes writes ten of these;
    /// byte-by-byte appends, each checking the array's uniqueness and capacity, were most of their cost).
    public static func write(_ date: Date, into bytes: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length) { buffer in
            write(date, to: buffer)
            bytes.append(contentsOf: buffer)
        }
    }

    /// Writes the `length` bytes of the timestamp into `buffer`, digit by digit and with the calendar computed
    /// arithmetically (`CivilDate`): a String plus `gmtime_r` for each was a large part of a page's JSON writing.
    private static func write(_ date: Date, to buffer: UnsafeMutableBufferPointer<UInt8>) {
        // From the seconds a Date holds (since 2001), split exactly into whole seconds and a fraction; the fraction
        // to the microsecond first (the database's precision), so a value a hair below a whole millisecond in
        // binary floating point is not truncated to the millisecond before it.
        let stored = date.timeIntervalSinceReferenceDate
        let wholeSeconds = stored.rounded(.down)
        let microseconds = Int(((stored - wholeSeconds) * 1_000_000).rounded())
        let totalMilliseconds = (Int(wholeSeconds) + 978_307_200) * 1000 + microseconds / 1000
        let (totalSeconds, milliseconds) = CivilDate.floorDivision(totalMilliseconds, 1000)
        let (days, secondOfDay) = CivilDate.floorDivision(totalSeconds, 86_400)
        let (year, month, day) = CivilDate.date(daysSince1970: days)
        func put(_ value: Int, at offset: Int, digits: Int, then separator: Unicode.Scalar) {
            var value = value.magnitude  // a year before 1 AD prints its digits rather than trapping
            for index in stride(from: offset + digits - 1, through: offset, by: -1) {
                buffer[index] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
            buffer[offset + digits] = UInt8(ascii: separator)
        }
        put(year, at: 0, digits: 4, then: "-")
        put(month, at: 5, digits: 2, then: "-")
        put(day, at: 8, digits: 2, then: "T")
        put(secondOfDay / 3600, at: 11, digits: 2, then: ":")
        put(secondOfDay / 60 % 60, at: 14, digits: 2, then: ":")
        put(secondOfDay % 60, at: 17, digits: 2, then: ".")
        put(milliseconds, at: 20, digits: 3, then: "Z")
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
