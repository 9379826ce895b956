internal import CZlib

/// gzip (RFC 1952) and checksums over zlib. The only file of the module that touches zlib.
enum Gzip {
    /// Level 1 for answers compressed per request (fastest; JSON still shrinks to about a quarter), 9 for answers
    /// compressed once and sent many times.
    static let perRequestLevel: Int32 = 1
    static let onceLevel: Int32 = 9

    /// `bytes` in the gzip format, or nil if zlib fails (the caller then sends them uncompressed).
    static func compress(_ bytes: [UInt8], level: Int32) -> [UInt8]? {
        var stream = z_stream()
        guard czlib_deflate_init_gzip(&stream, level) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(bytes.count)))
        var output = [UInt8](repeating: 0, count: bound)
        let status = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                // zlib does not write through next_in; its type is not const only for old compilers.
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { return nil }
        output.removeLast(Int(stream.avail_out))
        return output
    }

    /// A 64-bit tag of `bytes` for ETags: CRC-32 and Adler-32 side by side (zlib computes both at gigabytes per
    /// second). The same bytes give the same tag in every process, so instances agree.
    static func checksum(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBufferPointer { buffer in
            let crc = crc32(0, buffer.baseAddress, uInt(buffer.count))
            let adler = adler32(1, buffer.baseAddress, uInt(buffer.count))
            return UInt64(crc) << 32 | UInt64(adler)
        }
    }
}
