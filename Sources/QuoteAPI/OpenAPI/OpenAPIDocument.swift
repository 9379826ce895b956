import Foundation

/// The OpenAPI 3.1 document served at `/openapi.json`, assembled once from one fragment per resource
/// (`OpenAPI+<Resource>.swift`), so each resource documents itself beside its routes.
public enum OpenAPIDocument {
    /// The document as JSON bytes (sorted keys).
    public static let bytes: [UInt8] = {
        // Each fragment is {"paths": {...}, "schemas": {...}, "responses": {...}, "parameters": {...}}.
        var sections: [String: [String: Any]] = ["paths": [:], "schemas": [:], "responses": [:], "parameters": [:]]
        for fragment in fragments {
            guard let object = try? JSONSerialization.jsonObject(with: Data(fragment.utf8)) as? [String: Any] else {
                preconditionFailure("an OpenAPI fragment is not valid JSON")
            }
            for key in sections.keys {
                sections[key]!.merge(object[key] as? [String: Any] ?? [:]) { _, new in new }
            }
        }
        let document: [String: Any] = [
            "openapi": "3.1.0",
            "info": [
                "title": "QuoteVault API", "version": "1.0.0",
                "description":
                    "REST API of the QuoteVault app: quotes, search, quote of the day, accounts, favorites and collections.",
            ],
            "paths": withIdempotencyKeys(sections["paths"]!),
            "components": [
                "schemas": sections["schemas"]!,
                "responses": sections["responses"]!,
                "parameters": sections["parameters"]!,
                "securitySchemes": ["bearer": ["type": "http", "scheme": "bearer", "bearerFormat": "JWT"]],
            ],
        ]
        let data = try! JSONSerialization.data(
            withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])
        return Array(data)
    }()

    static let fragments: [String] = [
        operationsFragment, commonFragment, quotesFragment, libraryFragment, accountsFragment, syncFragment,
    ]
}
