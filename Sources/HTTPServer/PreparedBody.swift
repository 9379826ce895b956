/// A response body made once and sent many times (a cached page, the quote of the day): its ETag and its gzip
/// form are computed when it is made, not per request.
public struct PreparedBody: Sendable {
    public let bytes: [UInt8]
    /// A strong entity tag of `bytes`.
    public let etag: String
    /// The gzip form, when the body is large enough to be sent compressed.
    let gzipped: [UInt8]?

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        etag = ETag.of(bytes)
        gzipped =
            bytes.count > ResponseEncoding.minimumCompressedSize ? Gzip.compress(bytes, level: Gzip.onceLevel) : nil
    }

    /// Memory it holds, for caches that bound themselves in bytes.
    public var size: Int { bytes.count + (gzipped?.count ?? 0) + etag.utf8.count }
}

/// Entity tags of response bodies.
public enum ETag {
    /// `"<16 hex digits>"`: a 64-bit checksum of the bytes, the same in every process.
    public static func of(_ bytes: [UInt8]) -> String {
        "\"" + Gzip.checksum(bytes).hexDigits + "\""
    }
}

extension Response {
    /// A JSON answer from a prepared body: its ETag set, its compressed form ready.
    public static func json(prepared: PreparedBody, headers: HTTPHeaders = [:]) -> Response {
        var response = Response.json(bytes: prepared.bytes, headers: headers)
        response.headers.set("ETag", prepared.etag)
        response.gzippedBody = prepared.gzipped
        return response
    }

    /// The same answer with a strong ETag of its body (for public answers computed per request).
    public func taggedWithETag() -> Response {
        var response = self
        response.headers.set("ETag", ETag.of(body))
        return response
    }
}
