import ArgumentParser
import QuoteAPI

/// Prints the OpenAPI document, for validators and client generators; needs no database.
struct PrintOpenAPI: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "openapi", abstract: "Print the OpenAPI 3.1 document and exit.")

    func run() throws {
        print(String(decoding: OpenAPIDocument.bytes, as: UTF8.self))
    }
}
