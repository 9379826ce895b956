/// The parts of a JWT header we act on.
struct JOSEHeader: Decodable {
    var alg: String?
    var typ: String?
    /// Whether a `crit` member is present: it names extensions the verifier
    /// must understand, and we understand none (RFC 7515 §4.1.11).
    var hasCritical: Bool

    enum CodingKeys: String, CodingKey { case alg, typ, crit }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        alg = try container.decodeIfPresent(String.self, forKey: .alg)
        typ = try container.decodeIfPresent(String.self, forKey: .typ)
        hasCritical = container.contains(.crit)
    }

    /// Accepts exactly what we issue: `alg` "HS256" (no `none`, no other
    /// algorithm, no algorithm confusion), `typ` absent or "JWT", no `crit`.
    func validate() throws(JWTError) {
        guard alg == "HS256" else { throw .unsupportedAlgorithm }
        guard typ == nil || typ == "JWT", !hasCritical else { throw .unsupportedHeader }
    }
}
