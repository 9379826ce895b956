import AuthJWT
import Foundation
import PGClient

/// The keyset position after the last quote of a page: its `created_at` (to the microsecond) and `id`.
///
/// Encoded as base64url of `version ‖ micros ‖ id ‖ 8-byte HMAC`, so it is opaque to clients and a
/// malformed or altered cursor is refused (`422`) instead of silently paging from somewhere else.
public struct QuoteCursor: Sendable, Equatable {
    public let createdAt: PGTimestamp
    public let id: UUID

    private static let version: UInt8 = 1
    private static let macLength = 8

    /// Cursors signed with `key` (derived from the server's secret, so every instance accepts every cursor).
    public struct Codec: Sendable {
        private let key: HMACSHA256.Key

        public init(secret: [UInt8]) {
            key = HMACSHA256.Key(HMACSHA256.authenticationCode(for: Array("quote-cursor".utf8), key: secret))
        }

        public func encode(_ cursor: QuoteCursor) -> String {
            var payload: [UInt8] = [QuoteCursor.version]
            withUnsafeBytes(of: cursor.createdAt.microsecondsSince1970.bigEndian) { payload.append(contentsOf: $0) }
            withUnsafeBytes(of: cursor.id.uuid) { payload.append(contentsOf: $0) }
            payload += key.authenticationCode(for: payload)[..<QuoteCursor.macLength]
            return Base64URL.encode(payload)
        }

        private static let malformed = QuoteVaultError.invalid("cursor", "is malformed")

        /// - Throws: `QuoteVaultError.validation` naming `cursor` when it is not one of ours.
        public func decode(_ text: String) throws -> QuoteCursor {
            guard text.utf8.count <= 64, let bytes = Base64URL.decode(text),
                bytes.count == 1 + 8 + 16 + QuoteCursor.macLength,
                bytes[0] == QuoteCursor.version
            else { throw Self.malformed }
            let payload = Array(bytes[..<25])
            let mac = Array(key.authenticationCode(for: payload)[..<QuoteCursor.macLength])
            guard ConstantTime.equals(mac, Array(bytes[25...])) else { throw Self.malformed }
            let micros = payload[1..<9].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { $0.copyBytes(from: payload[9..<25]) }
            let id = UUID(uuid: uuid)
            return QuoteCursor(createdAt: PGTimestamp(microsecondsSince1970: micros), id: id)
        }
    }
}
