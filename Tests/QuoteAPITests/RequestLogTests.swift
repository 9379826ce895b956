import Foundation
import HTTPServer
import QuoteAPI
import XCTest

/// The access log line, in both formats, as the sink receives it.
final class RequestLogTests: XCTestCase {
    private func line(_ format: LogFormat, _ request: CompletedRequest) throws -> String {
        var descriptors: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&descriptors), 0)
        defer { close(descriptors[0]) }
        let sink = LogSink(fileDescriptor: descriptors[1])
        RequestLog(format: format, sink: sink).record(request)
        sink.flush()
        close(descriptors[1])
        let data = FileHandle(fileDescriptor: descriptors[0]).readDataToEndOfFile()
        return String(decoding: data, as: UTF8.self)
    }

    private let request = CompletedRequest(
        method: .get, route: "/v1/quotes/{id}", status: 404, duration: .microseconds(1_234), requestID: "req-\"1\"")

    func testJSONLineCarriesTheRequestFieldsAsTypedValues() throws {
        let text = try line(.json, request)
        XCTAssertTrue(text.hasSuffix("}\n"))
        XCTAssertEqual(text.filter { $0 == "\n" }.count, 1, "one line")
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        XCTAssertEqual(object["level"] as? String, "info")
        XCTAssertEqual(object["msg"] as? String, "request")
        XCTAssertEqual(object["method"] as? String, "GET")
        XCTAssertEqual(object["route"] as? String, "/v1/quotes/{id}")
        XCTAssertEqual(object["status"] as? Int, 404)
        XCTAssertEqual(object["duration_ms"] as? Double, 1.234)
        XCTAssertEqual(object["request_id"] as? String, "req-\"1\"", "escaped, not broken")
        XCTAssertNotNil(object["ts"] as? String)
    }

    func testTextLineIsReadable() throws {
        let text = try line(.text, request)
        XCTAssertTrue(
            text.hasSuffix(
                " INFO request duration_ms=1.234 method=GET request_id=req-\"1\" route=/v1/quotes/{id} status=404\n"),
            text)
    }
}
