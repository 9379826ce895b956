/// Hands C a non-null pointer even for empty input: several OpenSSL entry points
/// read NULL as "argument missing" rather than "zero bytes", and Swift gives no
/// base address for an empty buffer.
func withCBytes<Bytes: Collection<UInt8>, Result>(
    _ bytes: Bytes, _ body: (UnsafePointer<UInt8>, Int) -> Result
) -> Result {
    let direct = bytes.withContiguousStorageIfAvailable { buffer -> Result in
        guard let base = buffer.baseAddress, !buffer.isEmpty else {
            var zero: UInt8 = 0
            return withUnsafePointer(to: &zero) { body($0, 0) }
        }
        return body(base, buffer.count)
    }
    if let direct { return direct }
    // Non-contiguous collections (e.g. some lazy views) are copied once.
    return withCBytes(Array(bytes), body)
}
