import AuthJWT
import Foundation

/// A position in one user's change feed: "every change numbered above `seq` is still to come", and while a
/// first (full) sync is being paged, how far the listing of the library got.
///
/// Encoded as base64url of `version ‖ seq ‖ phase ‖ after ‖ afterQuote ‖ 8-byte HMAC` where the HMAC also
/// covers the user's id: opaque to clients, and a token that is altered, made up or another user's is malformed
/// (`422`).
public struct SyncToken: Sendable, Equatable {
    /// Where a full listing of the library stands: the phase being listed and the last key listed in it.
    public struct Listing: Sendable, Equatable {
        public var phase: SyncListingPhase
        /// The last collection id (collections, collection quotes) or quote id (favorites) listed; nil: none yet.
        public var after: UUID?
        /// For collection quotes: the last quote id listed within `after`'s collection.
        public var afterQuote: UUID?
    }

    /// The user's change number the token stands at (for a listing: the one its snapshot was taken at).
    public var seq: Int64
    /// Non-nil while the whole library is still being listed.
    public var listing: Listing?

    private static let version: UInt8 = 1
    private static let macLength = 8
    private static let payloadLength = 1 + 8 + 1 + 16 + 16

    /// Tokens signed with a key derived from the server's secret: every instance accepts every token.
    public struct Codec: Sendable {
        private let key: HMACSHA256.Key

        public init(secret: [UInt8]) {
            key = HMACSHA256.Key(HMACSHA256.authenticationCode(for: Array("sync-token".utf8), key: secret))
        }

        public func encode(_ token: SyncToken, userID: UUID) -> String {
            var payload: [UInt8] = [SyncToken.version]
            withUnsafeBytes(of: token.seq.bigEndian) { payload.append(contentsOf: $0) }
            payload.append(token.listing?.phase.rawValue ?? 0)
            for id in [token.listing?.after, token.listing?.afterQuote] {
                withUnsafeBytes(of: (id ?? Self.none).uuid) { payload.append(contentsOf: $0) }
            }
            payload += mac(payload, userID: userID)
            return Base64URL.encode(payload)
        }

        private static let malformed = QuoteVaultError.invalid("since", "is not a sync token of this account")
        private static let none = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

        /// - Throws: `QuoteVaultError.validation` naming `since` when the token is not one this user was given.
        public func decode(_ text: String, userID: UUID) throws -> SyncToken {
            guard text.utf8.count <= 96, let bytes = Base64URL.decode(text),
                bytes.count == SyncToken.payloadLength + SyncToken.macLength,
                bytes[0] == SyncToken.version
            else { throw Self.malformed }
            let payload = Array(bytes[..<SyncToken.payloadLength])
            guard ConstantTime.equals(mac(payload, userID: userID), Array(bytes[SyncToken.payloadLength...])) else {
                throw Self.malformed
            }
            let seq = payload[1..<9].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            guard seq >= 0 else { throw Self.malformed }
            func uuid(at offset: Int) -> UUID? {
                var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
                withUnsafeMutableBytes(of: &value) { $0.copyBytes(from: payload[offset..<offset + 16]) }
                let id = UUID(uuid: value)
                return id == Self.none ? nil : id
            }
            guard payload[9] == 0 else {
                guard let phase = SyncListingPhase(rawValue: payload[9]) else { throw Self.malformed }
                return SyncToken(
                    seq: seq, listing: Listing(phase: phase, after: uuid(at: 10), afterQuote: uuid(at: 26)))
            }
            return SyncToken(seq: seq, listing: nil)
        }

        private func mac(_ payload: [UInt8], userID: UUID) -> [UInt8] {
            var message = payload
            withUnsafeBytes(of: userID.uuid) { message.append(contentsOf: $0) }
            return Array(key.authenticationCode(for: message)[..<SyncToken.macLength])
        }
    }
}

/// The order in which a first sync lists the library; each phase is paged by its key.
public enum SyncListingPhase: UInt8, Sendable, CaseIterable {
    case profile = 1
    case collections, favorites, collectionQuotes
}
