/// A strict, bounded `multipart/form-data` reader (RFC 7578) for small uploads: the whole body is already in
/// memory (its size was limited while reading), parts are located by their boundary, and anything malformed is
/// refused rather than guessed at.
public struct MultipartForm: Sendable {
    public struct Part: Sendable {
        /// The `name` of its Content-Disposition (may be empty: supabase-swift sends `name=""`).
        public let name: String
        public let filename: String?
        public let contentType: String?
        public let body: [UInt8]
    }

    public let parts: [Part]

    static let maximumParts = 16
    static let maximumHeaderBytes = 8 * 1024

    /// Parses `body` with the boundary from a `multipart/form-data; boundary=…` Content-Type.
    /// - Throws: `HTTPError` 400 `invalid_multipart` for a missing boundary, a truncated body, or malformed headers.
    public init(body: [UInt8], contentType: String) throws(HTTPError) {
        guard let boundary = Self.boundary(in: contentType) else { throw Self.invalid("no boundary in Content-Type") }
        let delimiter = Array("--\(boundary)".utf8)
        let separator = Array("\r\n".utf8) + delimiter
        // The body starts with the first delimiter (a preamble is allowed before it, after CRLF).
        guard var position = Self.find(delimiter, in: body, from: 0) else {
            throw Self.invalid("no boundary in the body")
        }
        position += delimiter.count
        var parts: [Part] = []
        while true {
            // After a delimiter: "--" ends the form, CRLF starts a part.
            if body[position...].starts(with: Array("--".utf8)) { break }
            guard body[position...].starts(with: Array("\r\n".utf8)) else {
                throw Self.invalid("malformed boundary line")
            }
            position += 2
            guard parts.count < Self.maximumParts else { throw Self.invalid("more than \(Self.maximumParts) parts") }
            guard let headerEnd = Self.find(Array("\r\n\r\n".utf8), in: body, from: position),
                headerEnd - position <= Self.maximumHeaderBytes
            else { throw Self.invalid("part headers missing or too large") }
            let headers = try Self.headers(body[position..<headerEnd])
            let contentStart = headerEnd + 4
            guard let contentEnd = Self.find(separator, in: body, from: contentStart) else {
                throw Self.invalid("truncated part")
            }
            guard let disposition = headers["content-disposition"], disposition.lowercased().hasPrefix("form-data")
            else {
                throw Self.invalid("a part without Content-Disposition: form-data")
            }
            parts.append(
                Part(
                    name: Self.parameter("name", in: disposition) ?? "",
                    filename: Self.parameter("filename", in: disposition),
                    contentType: headers["content-type"], body: Array(body[contentStart..<contentEnd])))
            position = contentEnd + separator.count
            guard position < body.count else { throw Self.invalid("truncated body") }
        }
        self.parts = parts
    }

    private static func invalid(_ detail: String) -> HTTPError {
        HTTPError(status: 400, code: "invalid_multipart", title: "Invalid multipart body", detail: detail)
    }

    static func boundary(in contentType: String) -> String? {
        guard let value = parameter("boundary", in: contentType), !value.isEmpty, value.utf8.count <= 70 else {
            return nil
        }
        return value
    }

    /// `key=value` or `key="value"` among the `;`-separated parameters of a header value.
    static func parameter(_ key: String, in header: String) -> String? {
        for item in header.split(separator: ";").dropFirst() {
            let pair = item.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == key else { continue }
            var value = pair[1].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            return value
        }
        return nil
    }

    private static func headers(_ bytes: ArraySlice<UInt8>) throws(HTTPError) -> [String: String] {
        var headers: [String: String] = [:]
        for line in String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n") where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw invalid("malformed part header") }
            headers[line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()] =
                line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return headers
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        haystack[start...].firstRange(of: needle)?.lowerBound
    }
}
