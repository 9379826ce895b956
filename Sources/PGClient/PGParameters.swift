internal import CLibPQ

/// A query's SQL text and parameters laid out the way `PQexecParams` and `PQsendQueryParams` read them.
///
/// Built before any libpq call, so a query libpq would misread (a NUL inside a text value or the SQL, too many
/// parameters) is refused with a clear error instead of being silently cut short.
struct PGParameters {
    /// The SQL with `$1…$n` placeholders, rendered once (it is also the key of the connection's prepared statement).
    let sql: String
    /// All values in one buffer; each parameter is an offset into it (nil for SQL NULL).
    private var storage: [UInt8] = []
    private var offsets: [Int?] = []
    private var lengths: [Int32] = []
    private var formats: [Int32] = []
    /// Each parameter's type OID (0 lets the server infer it).
    private(set) var types: [Oid] = []

    init(_ query: PGQuery) throws(PGError) {
        let binds = query.binds
        guard binds.count <= 65_535 else {
            throw PGError(
                kind: .invalidQuery, message: "\(binds.count) parameters; PostgreSQL allows 65535",
                query: query.description)
        }
        sql = query.sql
        guard !containsNUL(sql) else {
            throw PGError(kind: .invalidQuery, message: "the SQL text contains a NUL byte", query: query.description)
        }
        for (index, bind) in binds.enumerated() {
            types.append(Oid(bind.type.rawValue))
            switch bind.value {
            case .null:
                offsets.append(nil)
                lengths.append(0)
                formats.append(0)
            case .text(let text):
                // libpq reads text parameters as C strings: a NUL would silently truncate.
                guard !containsNUL(text) else {
                    throw PGError(
                        kind: .invalidQuery, message: "text parameter $\(index + 1) contains a NUL byte",
                        query: query.description)
                }
                offsets.append(storage.count)
                storage.append(contentsOf: text.utf8)
                storage.append(0)
                lengths.append(0)
                formats.append(0)
            case .binary(let bytes):
                guard bytes.count <= Int32.max else {
                    throw PGError(
                        kind: .invalidQuery, message: "binary parameter $\(index + 1) is too large",
                        query: query.description)
                }
                offsets.append(storage.count)
                storage.append(contentsOf: bytes)
                lengths.append(Int32(bytes.count))
                formats.append(1)
            }
        }
        storage.append(0)  // never empty, so the buffer has a base address
    }

    /// Calls `body` with libpq's parameter arguments: count, types, values, lengths, formats. The pointers are
    /// valid only inside `body`.
    func withCArguments<R>(
        _ body: (
            Int32, UnsafePointer<Oid>?, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?,
            UnsafePointer<Int32>?
        ) -> R
    ) -> R {
        storage.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!)
            let values = offsets.map { offset in
                offset.map { UnsafePointer<CChar>(base.advanced(by: $0).assumingMemoryBound(to: CChar.self)) }
            }
            return values.withUnsafeBufferPointer { values in
                types.withUnsafeBufferPointer { types in
                    lengths.withUnsafeBufferPointer { lengths in
                        formats.withUnsafeBufferPointer { formats in
                            body(
                                Int32(offsets.count), types.baseAddress, values.baseAddress, lengths.baseAddress,
                                formats.baseAddress)
                        }
                    }
                }
            }
        }
    }
}

/// Whether `text` has a NUL byte, searched over its contiguous UTF-8 (iterating `utf8` generically showed in a page
/// of quotes' profile).
func containsNUL(_ text: String) -> Bool {
    var text = text
    return text.withUTF8 { bytes in bytes.withMemoryRebound(to: UInt8.self) { $0.contains(0) } }
}
