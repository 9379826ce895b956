/// Conditional requests and compression, applied to every answer just before it is sent (`HTTPServer.send`).
///
/// - A `200` answer to `GET`/`HEAD` that carries an `ETag` becomes `304 Not Modified` without a body when the
///   request's `If-None-Match` names that tag (weak comparison, `*` included).
/// - A textual body (JSON, problem+json, text) over `minimumCompressedSize` bytes is sent gzip-compressed when
///   the request's `Accept-Encoding` allows gzip; such answers say `Vary: Accept-Encoding` whatever their size,
///   since the same route may answer larger another time. A body prepared once (`PreparedBody`) brings its
///   compressed form, so cached answers are not compressed per request. The compressed answer's ETag is the weak
///   form of the same tag (as nginx does): the two encodings are the same content, and a client holding either
///   gets its `304`.
enum ResponseEncoding {
    /// "Larger than about 1 KB" (the contract): below this, gzip's header and a deflate block save little.
    static let minimumCompressedSize = 1024

    /// - Parameter requestHeader: the request's header field of that name; asked only when the answer could be
    ///   a `304` or compressed (most answers, `/health` among them, need neither).
    static func finish(_ response: Response, method: HTTPMethod, requestHeader: (String) -> String?) -> Response {
        var response = response
        let textual = isTextual(response.headers["Content-Type"])
        if textual { addVary(to: &response.headers) }
        if response.status == 200, method == .get || method == .head, let etag = response.headers["ETag"],
            let ifNoneMatch = requestHeader("If-None-Match"), matches(ifNoneMatch, etag)
        {
            return notModified(response)
        }
        guard textual, response.body.count > minimumCompressedSize, !response.headers.contains("Content-Encoding"),
            let acceptEncoding = requestHeader("Accept-Encoding"), acceptsGzip(acceptEncoding),
            let compressed = response.gzippedBody ?? Gzip.compress(response.body, level: Gzip.perRequestLevel),
            compressed.count < response.body.count
        else { return response }
        response.body = compressed
        response.gzippedBody = nil
        response.headers.set("Content-Encoding", "gzip")
        if let etag = response.headers["ETag"], !etag.hasPrefix("W/") { response.headers.set("ETag", "W/" + etag) }
        return response
    }

    /// The `304` for `response`: no body, and the fields a `200` would have had that caches need (RFC 9110 §15.4.5).
    private static func notModified(_ response: Response) -> Response {
        var headers = HTTPHeaders()
        for name in ["ETag", "Cache-Control", "Vary", "Expires", "Content-Location"] {
            if let value = response.headers[name] { headers.add(name, value) }
        }
        return Response(status: 304, headers: headers)
    }

    private static func isTextual(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        return contentType.hasPrefix("application/json") || contentType.hasPrefix("application/problem+json")
            || contentType.hasPrefix("text/")
    }

    private static func addVary(to headers: inout HTTPHeaders) {
        guard let vary = headers["Vary"] else { return headers.set("Vary", "Accept-Encoding") }
        if !vary.lowercased().contains("accept-encoding") { headers.set("Vary", vary + ", Accept-Encoding") }
    }

    /// Whether `Accept-Encoding` (RFC 9110 §12.5.3) allows gzip: listed (or `x-gzip`, or `*` when gzip is not
    /// named) with a q-value above 0. Read over the bytes without copies: it runs for every large answer, and
    /// splitting and lower-casing Strings showed in the cached pages' rate (bench/README.md).
    static func acceptsGzip(_ header: String) -> Bool {
        var wildcard: Bool?
        for element in header.utf8.split(separator: UInt8(ascii: ",")) {
            let parameters = element.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)
            let name = trimmed(parameters[0])
            var accepted = true
            for parameter in parameters.dropFirst() {
                let pair = trimmed(parameter)
                guard pair.count >= 2, pair.first! | 0x20 == UInt8(ascii: "q"),
                    pair[pair.index(after: pair.startIndex)] == UInt8(ascii: "=")
                else { continue }
                // A q-value is 0 to 1 with at most three decimals: above 0 exactly when a digit is not 0.
                accepted = pair.dropFirst(2).contains { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9") }
            }
            if equalsIgnoringCase(name, "gzip") || equalsIgnoringCase(name, "x-gzip") { return accepted }
            if name.elementsEqual("*".utf8) { wildcard = accepted }
        }
        return wildcard ?? false
    }

    private static func trimmed(_ bytes: Substring.UTF8View) -> Substring.UTF8View {
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return bytes[bytes.endIndex...] }
        return bytes[first...last]
    }

    /// ASCII case-insensitive comparison with a lower-case token.
    private static func equalsIgnoringCase(_ bytes: Substring.UTF8View, _ token: StaticString) -> Bool {
        guard bytes.count == token.utf8CodeUnitCount else { return false }
        return zip(bytes, UnsafeBufferPointer(start: token.utf8Start, count: token.utf8CodeUnitCount)).allSatisfy {
            a, b in
            a == b || (a | 0x20 == b && b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z"))
        }
    }

    /// Whether `If-None-Match` names `etag`, comparing weakly (RFC 9110 §13.1.2: `W/` ignored on both sides).
    static func matches(_ ifNoneMatch: String, _ etag: String) -> Bool {
        let wanted = opaque(etag)
        return ifNoneMatch.split(separator: ",").contains { candidate in
            let tag = candidate.trimmed()
            return tag == "*" || opaque(tag) == wanted
        }
    }

    private static func opaque<S: StringProtocol>(_ tag: S) -> Substring {
        let text = Substring(tag)
        return text.hasPrefix("W/") ? text.dropFirst(2) : text
    }
}

extension StringProtocol {
    fileprivate func trimmed() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
