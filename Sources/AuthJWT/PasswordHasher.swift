/// Hashes and verifies passwords with scrypt, storing PHC strings such as
/// `$scrypt$ln=14,r=8,p=1$<salt>$<hash>`.
///
/// Passwords are hashed as their UTF-8 bytes, without Unicode normalisation.
public struct PasswordHasher: Sendable {
    /// Cost parameters for new hashes.
    public let parameters: ScryptParameters

    static let saltLength = 16
    static let hashLength = 32
    /// Fixed salt for `hashDummy`; its output is thrown away, so it need not be secret.
    private static let dummySalt = [UInt8](repeating: 0x5A, count: saltLength)

    /// Creates a hasher. Out-of-range `parameters` are a programming error and trap.
    public init(parameters: ScryptParameters = .default) {
        precondition(parameters.isSupported, "PasswordHasher: unsupported scrypt parameters \(parameters)")
        self.parameters = parameters
    }

    /// Hashes `password` with a fresh 16-byte random salt.
    ///
    /// - Returns: A PHC string for storage.
    /// - Throws: `OpenSSLError` if randomness or scrypt fails in OpenSSL.
    public func hash(_ password: String) throws -> String {
        let salt = try SecureRandom.bytes(count: Self.saltLength)
        let hash = try derive(password, salt: salt, parameters: parameters, length: Self.hashLength)
        return PHCString(parameters: parameters, salt: salt, hash: hash).encoded
    }

    /// Whether `password` matches the stored PHC string `phc`, comparing in constant time.
    ///
    /// - Throws: `PasswordHashError` if `phc` is malformed or demands parameters
    ///   beyond our bounds; `OpenSSLError` if scrypt fails in OpenSSL.
    public func verify(_ password: String, against phc: String) throws -> Bool {
        let stored = try PHCString(parsing: phc)
        let candidate = try derive(
            password, salt: stored.salt, parameters: stored.parameters,
            length: stored.hash.count)
        return ConstantTime.equals(candidate, stored.hash)
    }

    /// Whether `phc` should be replaced by a fresh hash at the next successful
    /// login: any stored parameter weaker than ours, or a string we cannot read.
    public func needsRehash(_ phc: String) -> Bool {
        guard let stored = try? PHCString(parsing: phc) else { return true }
        return stored.parameters.isWeaker(than: parameters)
            || stored.salt.count < Self.saltLength
            || stored.hash.count < Self.hashLength
    }

    /// Spends the time a `verify` would, for a login whose account does not
    /// exist, so response timing does not reveal which emails are registered.
    public func hashDummy(_ password: String) {
        // The result is discarded; a failure here only makes this call faster.
        _ = try? derive(password, salt: Self.dummySalt, parameters: parameters, length: Self.hashLength)
    }

    private func derive(
        _ password: String, salt: [UInt8], parameters: ScryptParameters, length: Int
    ) throws(OpenSSLError) -> [UInt8] {
        try Scrypt.deriveKey(
            password: Array(password.utf8), salt: salt,
            n: UInt64(1) << UInt64(parameters.logN),
            r: UInt64(parameters.r), p: UInt64(parameters.p), length: length)
    }
}
