internal import CCurl
import Foundation

/// Sends one mail over SMTP with libcurl. The only file that touches curl.
struct SMTPClient: Sendable {
    /// e.g. `smtp://127.0.0.1:2525` (or `smtps://…`, with credentials in the URL if the server needs them).
    let url: String
    let from: String

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Delivers `message` (headers and body, CRLF line ends) to `recipient`. Blocking: call off the
    /// cooperative pool.
    func send(to recipient: String, message: [UInt8]) throws {
        guard let handle = curl_easy_init() else { throw Failure(description: "curl_easy_init failed") }
        defer { curl_easy_cleanup(handle) }
        let recipients = curl_slist_append(nil, "<\(recipient)>")
        defer { curl_slist_free_all(recipients) }

        // The reader hands curl the message in chunks; it lives until curl_easy_perform returns.
        let reader = MessageReader(bytes: message)
        let context = Unmanaged.passUnretained(reader).toOpaque()
        _ = ccurl_set_string(handle, CURLOPT_URL, url)
        _ = ccurl_set_string(handle, CURLOPT_MAIL_FROM, "<\(Self.address(of: from))>")
        _ = ccurl_set_pointer(handle, CURLOPT_MAIL_RCPT, UnsafeMutableRawPointer(recipients))
        _ = ccurl_set_long(handle, CURLOPT_UPLOAD, 1)
        _ = ccurl_set_read_function(handle, readTrampoline)
        _ = ccurl_set_pointer(handle, CURLOPT_READDATA, context)
        _ = ccurl_set_long(handle, CURLOPT_CONNECTTIMEOUT, 5)
        _ = ccurl_set_long(handle, CURLOPT_TIMEOUT, 30)
        _ = ccurl_set_long(handle, CURLOPT_NOSIGNAL, 1)
        let result = withExtendedLifetime(reader) { curl_easy_perform(handle) }
        guard result == CURLE_OK else {
            throw Failure(description: String(cString: curl_easy_strerror(result)))
        }
    }

    /// `Name <a@b>` → `a@b`.
    static func address(of mailbox: String) -> String {
        guard let open = mailbox.lastIndex(of: "<"), let close = mailbox.lastIndex(of: ">"), open < close else {
            return mailbox
        }
        return String(mailbox[mailbox.index(after: open)..<close])
    }
}

/// Feeds the message to curl's read callback.
private final class MessageReader {
    let bytes: [UInt8]
    var offset = 0
    init(bytes: [UInt8]) { self.bytes = bytes }
}

/// curl's read callback: copies the next chunk into `buffer`; 0 means the end.
private func readTrampoline(
    buffer: UnsafeMutablePointer<CChar>?, size: Int, count: Int, context: UnsafeMutableRawPointer?
) -> Int {
    guard let buffer, let context else { return 0 }
    // Unretained: SMTPClient.send keeps the reader alive for the whole transfer.
    let reader = Unmanaged<MessageReader>.fromOpaque(context).takeUnretainedValue()
    let length = min(size * count, reader.bytes.count - reader.offset)
    guard length > 0 else { return 0 }
    reader.bytes.withUnsafeBufferPointer { source in
        UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + reader.offset, byteCount: length)
    }
    reader.offset += length
    return length
}
