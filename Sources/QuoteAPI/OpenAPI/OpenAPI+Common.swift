extension OpenAPIDocument {
    /// Schemas, parameters and responses that several resources share.
    static let commonFragment = #"""
        {
          "schemas": {
            "Quote": {"type": "object", "required": ["id", "text", "author", "category", "created_at"],
              "properties": {
                "id": {"type": "string", "format": "uuid"},
                "text": {"type": "string", "minLength": 1},
                "author": {"type": "string", "minLength": 1},
                "category": {"$ref": "#/components/schemas/Category"},
                "created_at": {"type": "string", "format": "date-time",
                  "description": "RFC 3339 UTC with milliseconds"}}},
            "Category": {"type": "string", "enum": ["motivation", "love", "success", "wisdom", "humor"]},
            "PageEnvelope": {"type": "object", "required": ["items", "page", "page_size", "total", "has_more",
              "next_cursor"],
              "properties": {
                "items": {"type": "array"},
                "page": {"type": ["integer", "null"], "minimum": 1,
                  "description": "null when the page was asked by cursor"},
                "page_size": {"type": "integer", "minimum": 1, "maximum": 100},
                "total": {"type": "integer", "minimum": 0},
                "has_more": {"type": "boolean"},
                "next_cursor": {"type": ["string", "null"],
                  "description": "opaque; pass back as cursor= for the next page"}}},
            "QuotePage": {"allOf": [{"$ref": "#/components/schemas/PageEnvelope"},
              {"type": "object", "properties": {"items": {"type": "array",
                "items": {"$ref": "#/components/schemas/Quote"}}}}]},
            "SearchPage": {"allOf": [{"$ref": "#/components/schemas/QuotePage"},
              {"type": "object", "required": ["total_is_exact"], "properties": {
                "total": {"type": "integer", "minimum": 0, "maximum": 1000},
                "total_is_exact": {"type": "boolean",
                  "description": "false when there are more than 1,000 matches: total is then 1000"}}}]}
          },
          "parameters": {
            "Page": {"name": "page", "in": "query", "description": "1-based page number (default 1)",
              "schema": {"type": "integer", "minimum": 1, "maximum": 1000000000}},
            "PageSize": {"name": "page_size", "in": "query", "description": "items per page (default 20)",
              "schema": {"type": "integer", "minimum": 1, "maximum": 100}},
            "Cursor": {"name": "cursor", "in": "query",
              "description": "next_cursor of the previous page, instead of page",
              "schema": {"type": "string"}},
            "Category": {"name": "category", "in": "query", "description": "only quotes of this category",
              "schema": {"$ref": "#/components/schemas/Category"}}
          },
          "responses": {
            "NotModified": {"description": "If-None-Match named the answer's ETag: nothing changed, no body",
              "headers": {"ETag": {"schema": {"type": "string"}}}},
            "BadRequest": {"description": "The body is not valid JSON"},
            "Unauthorized": {"description": "Missing, malformed, expired, tampered or revoked access token"},
            "NotFound": {"description": "No such resource (a malformed id too)"},
            "ValidationFailed": {"description": "Invalid parameters or body; errors names each field"},
            "PayloadTooLarge": {"description": "The body exceeds the route's size limit (8 KiB on /v1/auth)"},
            "UnsupportedMediaType": {"description": "The body's Content-Type is not supported"},
            "TooManyRequests": {"description": "Throttled: past a per-address or per-account limit, or the client's \#
        database time over its budget (10 s in the last 10 s, DB_CLIENT_BUDGET) while connections are short; retry \#
        after the given seconds",
              "headers": {"Retry-After": {"schema": {"type": "integer"}}}},
            "QuotaExceeded": {"description": "quota_exceeded: past a per-account quota (see the README)"}
          }
        }
        """#
}
