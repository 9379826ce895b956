import CZlib

/// Decompresses a gzip body with zlib's inflate (a real decompressor, not the server's code), so tests can check
/// what a client reads. Nil when the bytes are not one complete, valid gzip stream.
public func gunzip(_ bytes: [UInt8]) -> [UInt8]? {
    var stream = z_stream()
    guard czlib_inflate_init_gzip(&stream) == Z_OK else { return nil }
    defer { inflateEnd(&stream) }
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16 * 1024)
    var input = bytes
    var status: Int32 = Z_OK
    input.withUnsafeMutableBufferPointer { source in
        stream.next_in = source.baseAddress
        stream.avail_in = uInt(source.count)
        repeat {
            let produced = chunk.withUnsafeMutableBufferPointer { target -> Int in
                stream.next_out = target.baseAddress
                stream.avail_out = uInt(target.count)
                status = inflate(&stream, Z_NO_FLUSH)
                return target.count - Int(stream.avail_out)
            }
            output += chunk[..<produced]
        } while status == Z_OK
    }
    // The whole input must be one stream that ends properly.
    guard status == Z_STREAM_END, stream.avail_in == 0 else { return nil }
    return output
}
