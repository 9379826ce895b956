/// A scrypt hash in PHC string format:
/// `$scrypt$ln=<logN>,r=<r>,p=<p>$<salt>$<hash>`, salt and hash in standard
/// base64 without padding (the PHC "B64").
struct PHCString: Sendable, Equatable {
    var parameters: ScryptParameters
    var salt: [UInt8]
    var hash: [UInt8]

    static let saltLengths = 8...64
    static let hashLengths = 16...64
    /// Longer than any string we write (about 150 bytes); checked before parsing.
    static let maximumLength = 512

    var encoded: String {
        "$scrypt$ln=\(parameters.logN),r=\(parameters.r),p=\(parameters.p)"
            + "$\(UnpaddedBase64.standard.encode(salt))$\(UnpaddedBase64.standard.encode(hash))"
    }
}

// In an extension, so that the memberwise initializer stays.
extension PHCString {
    /// Parses strictly: exactly the fields we write, in our order, canonical
    /// numbers and base64, parameters and sizes within bounds.
    init(parsing text: String) throws(PasswordHashError) {
        let bytes = Array(text.utf8)
        guard bytes.count <= Self.maximumLength else { throw .malformedHash }
        let fields = bytes.split(separator: UInt8(ascii: "$"), omittingEmptySubsequences: false)
        guard fields.count == 5, fields[0].isEmpty, fields[1].elementsEqual("scrypt".utf8) else {
            throw .malformedHash
        }
        let pairs = fields[2].split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        guard pairs.count == 3,
            let logN = Self.value(of: "ln", in: pairs[0]),
            let r = Self.value(of: "r", in: pairs[1]),
            let p = Self.value(of: "p", in: pairs[2]),
            let salt = UnpaddedBase64.standard.decode(fields[3]),
            let hash = UnpaddedBase64.standard.decode(fields[4])
        else { throw .malformedHash }
        let parameters = ScryptParameters(logN: logN, r: r, p: p)
        guard parameters.isSupported,
            Self.saltLengths.contains(salt.count),
            Self.hashLengths.contains(hash.count)
        else { throw .unsupportedParameters }
        self.init(parameters: parameters, salt: salt, hash: hash)
    }

    /// The number in `key=digits`: ASCII digits only, no sign or leading zero,
    /// at most 4 digits so it cannot overflow.
    private static func value(of key: String, in pair: ArraySlice<UInt8>) -> Int? {
        let parts = pair.split(separator: UInt8(ascii: "="), omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].elementsEqual(key.utf8) else { return nil }
        let digits = parts[1]
        guard (1...4).contains(digits.count),
            digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            digits.count == 1 || digits.first != UInt8(ascii: "0")
        else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }
}
