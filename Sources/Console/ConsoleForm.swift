import Failures
import Foundation
import HTTPServer

/// A posted form: `application/x-www-form-urlencoded` fields, or `multipart/form-data` fields and files.
struct ConsoleForm: Sendable {
    struct File: Sendable {
        let filename: String
        let bytes: [UInt8]
    }

    private(set) var fields: [String: String] = [:]
    /// Every value of each urlencoded name in order (checkboxes repeat a name); `fields` keeps the first.
    private(set) var repeated: [String: [String]] = [:]
    private(set) var files: [String: File] = [:]

    static let empty = ConsoleForm()

    subscript(_ name: String) -> String? { fields[name] }

    /// All the values posted under `name`.
    func values(_ name: String) -> [String] { repeated[name] ?? [] }

    /// Parses the body by its media type; a GET (or an empty body) has no fields.
    init(_ request: Request) throws {
        guard !request.body.isEmpty, let type = request.mediaType else { return }
        switch type {
        case "application/x-www-form-urlencoded":
            for pair in String(decoding: request.body, as: UTF8.self).split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = Self.decode(parts[0]), value = parts.count > 1 ? Self.decode(parts[1]) : ""
                if fields[name] == nil { fields[name] = value }
                repeated[name, default: []].append(value)
            }
        case "multipart/form-data":
            let contentType = request.headers["Content-Type"] ?? ""
            for part in try MultipartForm(body: request.body, contentType: contentType).parts {
                if let filename = part.filename {
                    files[part.name] = File(filename: filename, bytes: part.body)
                } else if fields[part.name] == nil {
                    fields[part.name] = String(decoding: part.body, as: UTF8.self)
                }
            }
        default:
            throw Failure.badRequest(
                code: "invalid_form",
                detail: "a form must be sent as application/x-www-form-urlencoded or multipart/form-data")
        }
    }

    private init() {}

    /// `+` is a space, then percent-decoding; undecodable input is taken as it is.
    private static func decode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}
