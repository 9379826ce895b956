import ArgumentParser
import QuoteApp
import QuoteVault

/// Prints the OpenAPI document, for validators and client generators; needs no database.
struct PrintOpenAPI: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "openapi", abstract: "Print the OpenAPI 3.1 document and exit.")

    func run() throws {
        let document = try Application.openAPIDocument(migrationsDirectory: try Migration.locateDirectory())
        print(String(decoding: document, as: UTF8.self))
    }
}
