import Foundation
import HTTPServer
import Logging

/// The access log: an `info` line per answered request with its method, route pattern, status, duration and
/// request id (never a header, query or body, so never a token or password).
///
/// It writes the line that `logger.info("request", metadata: …)` would, straight into the log buffer: going
/// through swift-log's metadata dictionary (five boxed values, hashed, sorted, cast back) was one of the largest
/// costs of the quote of the day in profiles (bench/README.md), and this runs for every request.
public struct RequestLog: Sendable {
    private let format: LogFormat
    private let sink: LogSink

    public init(format: LogFormat, sink: LogSink = .standardError) {
        self.format = format
        self.sink = sink
    }

    public func record(_ request: CompletedRequest) {
        let milliseconds = Self.milliseconds(request.duration)
        switch format {
        case .json:
            // Keys in sorted order, as JSONLogHandler writes metadata.
            var line = JSONLogHandler.openLine(.info, "request")
            line.comma(); line.key("duration_ms"); line.double(milliseconds)
            line.comma(); line.key("method"); line.string(request.method.rawValue)
            line.comma(); line.key("request_id"); line.string(request.requestID)
            line.comma(); line.key("route"); line.string(request.route)
            line.comma(); line.key("status"); line.int(request.status)
            line.raw("}\n")
            sink.write(line.bytes, urgent: false)
        case .text:
            let fields =
                "duration_ms=\(milliseconds) method=\(request.method.rawValue) request_id=\(request.requestID) "
                + "route=\(request.route) status=\(request.status)"
            sink.write(Array("\(TextLogHandler.prefix(.info, "request")) \(fields)\n".utf8), urgent: false)
        }
    }

    /// Milliseconds with microsecond resolution.
    static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return (Double(seconds) * 1e6 + Double(attoseconds / 1_000_000_000_000)).rounded() / 1000
    }
}
