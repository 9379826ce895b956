import Foundation
import HTTPServer

/// The OpenAPI 3.1 document served at `/openapi.json`, assembled from one fragment per resource
/// (`OpenAPI+<Resource>.swift`), so each resource documents itself beside its routes; what the routes' policies
/// declare (`withRoutePolicies`) and what every route of a kind answers alike (`withCommonResponses`) are added.
public enum OpenAPIDocument {
    /// The document of `routes` as JSON bytes (sorted keys).
    public static func bytes(routes: [Route]) -> [UInt8] {
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
                "description": """
                REST API of the QuoteVault app: quotes, search, quote of the day, accounts, favorites and \
                collections.
                """,
            ],
            "paths": withCommonResponses(withRoutePolicies(sections["paths"]!, routes: routes)),
            "components": [
                "schemas": sections["schemas"]!,
                "responses": withProblemBodies(sections["responses"]!),
                "parameters": sections["parameters"]!,
                "securitySchemes": ["bearer": ["type": "http", "scheme": "bearer", "bearerFormat": "JWT"]],
            ],
        ]
        let data = try! JSONSerialization.data(
            withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])
        return Array(data)
    }

    static let fragments: [String] = [
        operationsFragment, commonFragment, quotesFragment, libraryFragment, accountsFragment, syncFragment,
    ]

    /// Every `/v1` operation can answer 503 (the database unavailable) and 429 (its client over its database-time
    /// budget); one with a bearer token 401; one with a body
    /// 413 and 415 (too large, of a type it does not take), and with a JSON body also 400 and 422 (unreadable,
    /// invalid).
    /// An operation that documents one of these itself keeps its own.
    static func withCommonResponses(_ paths: [String: Any]) -> [String: Any] {
        forEachOperation(in: paths) { path, _, operation in
            var common: [String: String] = [:]
            if path.hasPrefix("/v1/") {
                common["503"] = "ServiceUnavailable"
                // A client over its measured database-time budget while connections are short, whatever the route.
                common["429"] = "TooManyRequests"
            }
            if operation["security"] != nil { common["401"] = "Unauthorized" }
            let body = operation["requestBody"] as? [String: Any]
            if body != nil {
                common["413"] = "PayloadTooLarge"
                common["415"] = "UnsupportedMediaType"
            }
            if (body?["content"] as? [String: Any])?["application/json"] != nil {
                common["400"] = "BadRequest"
                common["422"] = "ValidationFailed"
            }
            addResponses(common, to: &operation)
            if var responses = operation["responses"] as? [String: Any] {
                for (status, response) in responses where Int(status) ?? 0 >= 400 {
                    responses[status] = problem(response)
                }
                operation["responses"] = responses
            }
        }
    }

    /// The shared responses, each a failure but `NotModified`, with their problem+json bodies.
    static func withProblemBodies(_ responses: [String: Any]) -> [String: Any] {
        var responses = responses
        for (name, response) in responses where name != "NotModified" { responses[name] = problem(response) }
        return responses
    }

    /// `response` (a failure's) with its body, unless it is a `$ref` or has one: every failure on `/v1` is
    /// problem+json.
    static func problem(_ response: Any) -> Any {
        guard var response = response as? [String: Any], response["description"] != nil, response["content"] == nil
        else { return response }
        response["content"] = ["application/problem+json": ["schema": ["$ref": "#/components/schemas/Problem"]]]
        return response
    }

    /// `responses` (status: name in components/responses) added to `operation` where it has none of its own.
    static func addResponses(_ responses: [String: String], to operation: inout [String: Any]) {
        var all = operation["responses"] as? [String: Any] ?? [:]
        for (status, name) in responses where all[status] == nil {
            all[status] = ["$ref": "#/components/responses/\(name)"]
        }
        operation["responses"] = all
    }

    /// `paths` with `change` applied to each operation (path, method, operation).
    static func forEachOperation(
        in paths: [String: Any], _ change: (String, String, inout [String: Any]) -> Void
    ) -> [String: Any] {
        var paths = paths
        for (path, item) in paths {
            guard var operations = item as? [String: Any] else { continue }
            for (method, value) in operations {
                guard var operation = value as? [String: Any] else { continue }
                change(path, method, &operation)
                operations[method] = operation
            }
            paths[path] = operations
        }
        return paths
    }
}
