import HTTPServer

extension OpenAPIDocument {
    /// Offline sync: the change feed, queued operations, and the Idempotency-Key every /v1 write accepts
    /// (added to those operations by `withRoutePolicies`).
    static let syncFragment = #"""
        {
          "paths": {
            "/v1/sync": {
              "get": {"operationId": "syncChanges", "tags": ["Sync"],
                "summary": "The whole library (no since), or every change after a token, deletions included, oldest \#
        first",
                "description": "Without since: the profile, collections, favorites and collection quotes as \#
        upserts, listed from one snapshot; the last page's next continues with the changes made since. With since: \#
        every change after it; within a page only the last change of an object is sent, and an upsert carries the \#
        object's current state. A change committed while a sync runs is never skipped by a later sync from the \#
        returned token. History is kept at least 30 days.",
                "parameters": [
                  {"name": "since", "in": "query", "description": "next of an earlier answer",
                    "schema": {"type": "string", "maxLength": 96}},
                  {"name": "limit", "in": "query", "description": "at most this many changes (default 500)",
                    "schema": {"type": "integer", "minimum": 1, "maximum": 1000}}],
                "responses": {
                  "200": {"description": "A page of changes",
                    "content": {"application/json": {"schema": {"type": "object",
                    "required": ["changes", "next", "has_more"], "properties": {
                      "changes": {"type": "array", "items": {"$ref": "#/components/schemas/Change"}},
                      "next": {"type": "string", "description": "the token to sync from next"},
                      "has_more": {"type": "boolean", "description": "true: ask again with next now"}}}}}},
                  "410": {"description": "The token is older than the kept history (code sync_token_expired): sync \#
        again without since"},
                  "422": {"$ref": "#/components/responses/ValidationFailed"}}},
              "post": {"operationId": "syncOperations", "tags": ["Sync"],
                "summary": "Apply queued offline operations in order, each at most once (by its id)",
                "description": "Each result is what the matching /v1 route would answer; one failing does not stop \#
        the others. A repeated operation id (remembered at least 30 days) returns its first result and applies \#
        nothing. Identifiers (id, op, quote_id, collection_id) are checked for the whole batch first: a malformed \#
        one is 422 and nothing is applied. next is the feed's position after the batch; keep syncing from your own \#
        last token to also receive other devices' changes.",
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object",
                  "required": ["operations"],
                  "properties": {"operations": {"type": "array", "maxItems": 500,
                    "items": {"$ref": "#/components/schemas/SyncOperation"}}}}}}},
                "responses": {
                  "200": {"description": "One result per operation, in order",
                    "content": {"application/json": {"schema": {"type": "object",
                    "required": ["results", "next"], "properties": {
                      "results": {"type": "array", "items": {"type": "object", "required": ["id", "status"],
                        "properties": {
                        "id": {"type": "string", "format": "uuid"}, "status": {"type": "integer"},
                        "code": {"type": "string", "description": "on failure: the route's problem code"},
                        "object": {"description": "the route's answer body, when it has one (FavoriteRef, \#
        Collection, CollectionQuoteRef, User)"}}}},
                      "next": {"type": "string"}}}}}},
                  "403": {"$ref": "#/components/responses/QuotaExceeded"}}}},
            "/v1/sync/events": {
              "get": {"operationId": "syncEvents", "tags": ["Sync"],
                "summary": "Live changes: a server-sent event stream telling when the library changed",
                "description": "Send Accept: text/event-stream. The first event, at connect, is changed with the \#
        feed's position now: a client whose own last token equals it missed nothing, otherwise it syncs. Then each \#
        time the library changes (through any surface, on any instance) an event changed with data {\"next\": \#
        token} follows, next being a position after the change; a client then reads GET /v1/sync?since= its own \#
        last token as usual, so a lost stream loses nothing (reconnect and sync). Events of one transaction may \#
        come as one, and a change may be told more than once. A comment line (: keep-alive) comes every 15 s. The \#
        stream ends when its session ends (logout, password change, account deletion, revocation); the access \#
        token's expiry does not end it. A user may hold 8 streams at once and an address 32 (per instance; \#
        beyond: 429 with Retry-After). A client that does not read its events (over 64 KiB waiting) is \#
        disconnected.",
                "responses": {
                  "200": {"description": "An endless stream of events",
                    "content": {"text/event-stream": {"schema": {
                      "description": "One event as its fields; keep-alive comments carry none",
                      "type": "object", "required": ["event", "data"],
                      "properties": {
                        "event": {"type": "string", "enum": ["changed"]},
                        "data": {"type": "string", "description": "JSON: {\"next\": sync token}"}},
                      "example": {"event": "changed", "data": "{\"next\": \"AQAAAAAAAAAD…\"}"}}}}},
                  "429": {"$ref": "#/components/responses/TooManyRequests"}}}}
          },
          "parameters": {
            "IdempotencyKey": {"name": "Idempotency-Key", "in": "header", "required": false,
              "description": "Within 24 hours the same key, user, method, path and body replay the first answer \#
        (Idempotent-Replayed: true) and change nothing; another request under the key is 422 \#
        idempotency_key_reused; a request arriving while the first runs waits for its answer (409 conflict after 10 \#
        s). A user holds at most 10,000 live keys (beyond: 429 for a new key).",
              "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"}}
          },
          "responses": {
            "Conflict": {"description": "Conflict: a taken id, or a request with the same Idempotency-Key still \#
        running"}
          },
          "schemas": {
            "Change": {"type": "object", "required": ["type", "op"],
              "description": "Flat; the object's fields only on upsert",
              "properties": {
                "type": {"enum": ["favorite", "collection", "collection_quote", "profile"]},
                "op": {"enum": ["upsert", "delete"]},
                "quote_id": {"type": "string", "format": "uuid"},
                "favorited_at": {"type": "string", "format": "date-time"},
                "id": {"type": "string", "format": "uuid"},
                "collection": {"$ref": "#/components/schemas/Collection"},
                "collection_id": {"type": "string", "format": "uuid"},
                "added_at": {"type": "string", "format": "date-time"},
                "user": {"$ref": "#/components/schemas/User"}}},
            "SyncOperation": {"type": "object", "required": ["id", "op"],
              "properties": {
                "id": {"type": "string", "format": "uuid",
                  "description": "client-generated; the operation is applied at most once"},
                "op": {"enum": ["favorite.add", "favorite.remove", "collection.create", "collection.rename",
                  "collection.delete",
                  "collection.add_quote", "collection.remove_quote", "profile.update"]},
                "quote_id": {"type": "string", "format": "uuid",
                  "description": "favorite.*, collection.add_quote, collection.remove_quote"},
                "collection_id": {"type": "string", "format": "uuid",
                  "description": "collection.*; for create, the client's own id"},
                "name": {"type": "string", "description": "collection.create, collection.rename"},
                "display_name": {"type": ["string", "null"],
                  "description": "profile.update (the body of PATCH /v1/me)"},
                "preferences": {"type": ["object", "null"], "description": "profile.update"}}},
            "CollectionCreate": {"type": "object", "required": ["name"], "properties": {
              "name": {"type": "string", "minLength": 1, "maxLength": 100, "pattern": "\\S",
                "description": "1…100 characters after trimming"},
              "id": {"type": "string", "format": "uuid",
                "description": "optional client-generated id; one that exists is 409 conflict"}}}
          }
        }
        """#

    /// What each operation's route declares in its policy: a user's access token (`security`: bearer), and
    /// `Idempotency-Key` with its failures (409 while the first request runs, 422 for a malformed or reused key,
    /// 429 for a user holding the most live keys).
    static func withRoutePolicies(_ paths: [String: Any], routes: [Route]) -> [String: Any] {
        let policies = Dictionary(routes.map { ("\($0.method.rawValue) \($0.pattern)", $0.policy) }) { first, _ in first
        }
        return forEachOperation(in: paths) { path, method, operation in
            guard let policy = policies["\(method.uppercased()) \(path)"] else { return }
            if policy.authentication.name == "user_token" { operation["security"] = [["bearer": [String]()]] }
            guard policy.idempotent else { return }
            operation["parameters"] =
                (operation["parameters"] as? [Any] ?? []) + [["$ref": "#/components/parameters/IdempotencyKey"]]
            addResponses(["409": "Conflict", "422": "ValidationFailed", "429": "TooManyRequests"], to: &operation)
        }
    }
}
