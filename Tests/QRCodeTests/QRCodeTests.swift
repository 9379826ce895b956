import Foundation
import XCTest

@testable import QRCode

/// The QR encoder: its Reed–Solomon codewords against the standard's worked examples, its format information
/// against the standard's table, and whole symbols of every size it makes read back by a real decoder (zbarimg,
/// from the SVG rendered by rsvg-convert; scripts/install-deps installs both).
final class QRCodeTests: XCTestCase {
    func testReedSolomonGivesTheStandardsCodewords() {
        // ISO/IEC 18004 annex I: "01234567" as version 1-M, numeric mode.
        let numeric: [UInt8] = [
            0x10, 0x20, 0x0C, 0x56, 0x61, 0x80, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11,
        ]
        XCTAssertEqual(
            ReedSolomon(degree: 10).remainder(of: numeric),
            [0xA5, 0x24, 0xD4, 0xC1, 0xED, 0x36, 0xC7, 0x87, 0x2C, 0x55])
        // "HELLO WORLD" as version 1-M, alphanumeric mode.
        let hello: [UInt8] = [32, 91, 11, 120, 209, 114, 220, 77, 67, 64, 236, 17, 236, 17, 236, 17]
        XCTAssertEqual(ReedSolomon(degree: 10).remainder(of: hello), [196, 35, 39, 119, 235, 215, 231, 226, 93, 23])
    }

    func testByteModeDataIsHeaderBytesTerminatorAndPadding() {
        let version = QRVersion(number: 1)
        let data = QRCodewords.data(Array("hi".utf8), version: version, correction: .medium)
        // 0100 00000010 01101000 01101001 0000, then 0xEC 0x11 … to 16 codewords.
        XCTAssertEqual(Array(data.prefix(4)), [0x40, 0x26, 0x86, 0x90])
        XCTAssertEqual(data.count, 16)
        XCTAssertEqual(
            Array(data.suffix(12)), [0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11])
    }

    func testVersionsHoldWhatTheStandardSays() {
        // Byte mode capacities of ISO/IEC 18004 table 7.
        let medium = [14, 26, 42, 62, 84, 106, 122, 152, 180, 213, 251, 287, 331, 362, 412, 450, 504, 560, 624, 666]
        let low = [17, 32, 53, 78, 106, 134, 154, 192, 230, 271, 321, 367, 425, 458, 520, 586, 644, 718, 792, 858]
        for number in QRVersion.range {
            XCTAssertEqual(QRVersion(number: number).byteCapacity(.medium), medium[number - 1], "version \(number)-M")
            XCTAssertEqual(QRVersion(number: number).byteCapacity(.low), low[number - 1], "version \(number)-L")
        }
        XCTAssertEqual(QRVersion(number: 7).alignmentCentres, [6, 22, 38])
        XCTAssertEqual(QRVersion(number: 20).alignmentCentres, [6, 34, 62, 90])
        XCTAssertThrowsError(try QRCode(bytes: Array(repeating: 0x41, count: 667), correction: .medium))
    }

    func testFormatInformationIsTheStandardsForTheMaskChosen() throws {
        // ISO/IEC 18004 annex C, table C.1: the 15 bits after masking, by level and mask.
        let table: [QRErrorCorrection: [Int]] = [
            .medium: [0x5412, 0x5125, 0x5E7C, 0x5B4B, 0x45F9, 0x40CE, 0x4F97, 0x4AA0],
            .low: [0x77C4, 0x72F3, 0x7DAA, 0x789D, 0x662F, 0x6318, 0x6C41, 0x6976],
        ]
        for correction in QRErrorCorrection.allCases {
            for text in ["a", "QuoteVault", String(repeating: "otpauth://totp/", count: 5)] {
                let code = try QRCode(text: text, correction: correction)
                // The first copy, bit 0 at the top: down column 8 (skipping the timing row), then along row 8.
                let places = (0...5).map { (8, $0) } + [(8, 7), (8, 8), (7, 8)] + (9..<15).map { (14 - $0, 8) }
                let bits = places.enumerated().reduce(0) {
                    $0 | (code[$1.element.0, $1.element.1] ? 1 << $1.offset : 0)
                }
                XCTAssertEqual(bits, table[correction]?[code.mask], "\(correction) \(text)")
                XCTAssertTrue(code[8, code.size - 8], "the dark module")
            }
        }
    }

    func testEverySizeReadsBackThroughARealDecoder() throws {
        let uri =
            "otpauth://totp/QuoteVault%20console:owner@example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
            + "&issuer=QuoteVault%20console&algorithm=SHA1&digits=6&period=30"
        var payloads = [uri, "1", "Hello, QR"]
        // Lengths that reach every version up to 20 at one level or the other.
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 -./:?=&%")
        for length in [30, 60, 100, 140, 200, 260, 330, 400, 470, 560, 650, 720, 850] {
            payloads.append(String((0..<length).map { alphabet[($0 * 7 + length) % alphabet.count] }))
        }
        var versions = Set<Int>()
        for correction in QRErrorCorrection.allCases {
            for payload in payloads {
                guard let code = try? QRCode(text: payload, correction: correction) else {
                    XCTAssertTrue(correction == .medium && payload.utf8.count > 666, "only too long is refused")
                    continue
                }
                versions.insert(code.version)
                XCTAssertEqual(try decoded(code.svg()), payload, "\(correction), \(payload.count) bytes")
            }
        }
        XCTAssertTrue(
            versions.isSuperset(of: [1, 7, 10, 20]) && versions.count >= 12, "sizes read: \(versions.sorted())")
    }

    /// The text zbarimg reads from `svg` rendered to PNG by rsvg-convert.
    private func decoded(_ svg: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("qr-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let image = directory.appendingPathComponent("code.svg"), png = directory.appendingPathComponent("code.png")
        try Data(svg.utf8).write(to: image)
        _ = try run("rsvg-convert", ["--zoom", "6", "--output", png.path, image.path])
        return try run("zbarimg", ["--quiet", "--raw", png.path]).trimmingCharacters(in: .newlines)
    }

    private func run(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let bytes = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "\(tool) failed (scripts/install-deps installs it)")
        return String(decoding: bytes, as: UTF8.self)
    }
}
