extension OpenAPIDocument {
    /// Favorites and collections: the caller's own library (Bearer).
    static let libraryFragment = #"""
        {
          "paths": {
            "/v1/favorites": {"get": {"operationId": "listFavorites", "tags": ["Favorites"],
              "summary": "The caller's favorites, newest favorite first",
              "parameters": [{"$ref": "#/components/parameters/Page"}, {"$ref": "#/components/parameters/PageSize"}],
              "responses": {
                "200": {"description": "A page of {quote, favorited_at}",
                  "content": {"application/json": {"schema": {"allOf": [
                  {"$ref": "#/components/schemas/PageEnvelope"},
                  {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "object",
                    "required": ["quote", "favorited_at"],
                    "properties": {"quote": {"$ref": "#/components/schemas/Quote"}, "favorited_at": {"type": "string",
                      "format": "date-time"}}}}}}]}}}},
                "422": {"$ref": "#/components/responses/ValidationFailed"}}}},
            "/v1/favorites/ids": {"get": {"operationId": "favoriteIds", "tags": ["Favorites"],
              "summary": "Every favorite's quote id, for a quick local isFavorite",
              "responses": {
                "200": {"description": "All favorite quote ids",
                  "content": {"application/json": {"schema": {"type": "object", "required": ["ids"],
                  "properties": {"ids": {"type": "array", "items": {"type": "string", "format": "uuid"}}}}}}}}}},
            "/v1/favorites/{quote_id}": {
              "put": {"operationId": "addFavorite", "tags": ["Favorites"],
                "summary": "Make a quote a favorite (idempotent)",
                "parameters": [{"$ref": "#/components/parameters/QuoteIdPath"}],
                "responses": {
                  "201": {"description": "It became a favorite",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/FavoriteRef"}}}},
                  "200": {"description": "It already was a favorite",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/FavoriteRef"}}}},
                  "404": {"$ref": "#/components/responses/NotFound"}}},
              "delete": {"operationId": "removeFavorite", "tags": ["Favorites"],
                "summary": "Remove a favorite (204 also when it was not one)",
                "parameters": [{"$ref": "#/components/parameters/QuoteIdPath"}],
                "responses": {
                  "204": {"description": "Not a favorite (any more)"}}}},
            "/v1/collections": {
              "get": {"operationId": "listCollections", "tags": ["Collections"],
                "summary": "The caller's collections, newest first",
                "responses": {
                  "200": {"description": "All collections",
                    "content": {"application/json": {"schema": {"type": "object", "required": ["items"],
                    "properties": {"items": {"type": "array",
                      "items": {"$ref": "#/components/schemas/Collection"}}}}}}}}},
              "post": {"operationId": "createCollection", "tags": ["Collections"],
                "summary": "Create a collection (name trimmed, 1-100 characters; duplicates allowed; optional \#
        client-generated id)",
                "requestBody": {"required": true,
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CollectionCreate"}}}},
                "responses": {
                  "201": {"description": "Created",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Collection"}}}},
                  "403": {"$ref": "#/components/responses/QuotaExceeded"}}}},
            "/v1/collections/{id}": {
              "patch": {"operationId": "renameCollection", "tags": ["Collections"],
                "summary": "Rename a collection",
                "parameters": [{"$ref": "#/components/parameters/CollectionIdPath"}],
                "requestBody": {"required": true,
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CollectionName"}}}},
                "responses": {
                  "200": {"description": "Renamed",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Collection"}}}},
                  "404": {"$ref": "#/components/responses/NotFound"}}},
              "delete": {"operationId": "deleteCollection", "tags": ["Collections"],
                "summary": "Delete a collection and its quote associations (the quotes stay)",
                "parameters": [{"$ref": "#/components/parameters/CollectionIdPath"}],
                "responses": {
                  "204": {"description": "Deleted"},
                  "404": {"$ref": "#/components/responses/NotFound"}}}},
            "/v1/collections/{id}/quotes": {"get": {"operationId": "listCollectionQuotes", "tags": ["Collections"],
              "summary": "The collection's quotes, newest addition first",
              "parameters": [{"$ref": "#/components/parameters/CollectionIdPath"},
                {"$ref": "#/components/parameters/Page"},
                {"$ref": "#/components/parameters/PageSize"}],
              "responses": {
                "200": {"description": "A page of {quote, added_at}",
                  "content": {"application/json": {"schema": {"allOf": [
                  {"$ref": "#/components/schemas/PageEnvelope"},
                  {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "object",
                    "required": ["quote", "added_at"],
                    "properties": {"quote": {"$ref": "#/components/schemas/Quote"}, "added_at": {"type": "string",
                      "format": "date-time"}}}}}}]}}}},
                "404": {"$ref": "#/components/responses/NotFound"},
                "422": {"$ref": "#/components/responses/ValidationFailed"}}}},
            "/v1/collections/{id}/quotes/{quote_id}": {
              "put": {"operationId": "addCollectionQuote", "tags": ["Collections"],
                "summary": "Add a quote to a collection (idempotent)",
                "parameters": [{"$ref": "#/components/parameters/CollectionIdPath"},
                  {"$ref": "#/components/parameters/QuoteIdPath"}],
                "responses": {
                  "201": {"description": "Added",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CollectionQuoteRef"}}}},
                  "200": {"description": "Already there",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CollectionQuoteRef"}}}},
                  "403": {"$ref": "#/components/responses/QuotaExceeded"},
                  "404": {"$ref": "#/components/responses/NotFound"}}},
              "delete": {"operationId": "removeCollectionQuote", "tags": ["Collections"],
                "summary": "Remove a quote from a collection (204 also when it was not there)",
                "parameters": [{"$ref": "#/components/parameters/CollectionIdPath"},
                  {"$ref": "#/components/parameters/QuoteIdPath"}],
                "responses": {
                  "204": {"description": "Not in the collection (any more)"},
                  "404": {"$ref": "#/components/responses/NotFound"}}}}
          },
          "parameters": {
            "QuoteIdPath": {"name": "quote_id", "in": "path", "required": true, "schema": {"type": "string"}},
            "CollectionIdPath": {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}
          },
          "schemas": {
            "Collection": {"type": "object", "required": ["id", "name", "created_at", "updated_at", "quote_count"],
              "properties": {"id": {"type": "string", "format": "uuid"}, "name": {"type": "string", "minLength": 1,
                "maxLength": 100},
                "created_at": {"type": "string", "format": "date-time"}, "updated_at": {"type": "string",
                  "format": "date-time"},
                "quote_count": {"type": "integer", "minimum": 0}}},
            "CollectionName": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string",
              "minLength": 1, "maxLength": 100,
              "pattern": "\\S", "description": "1…100 characters after trimming; not only whitespace"}}},
            "FavoriteRef": {"type": "object", "required": ["quote_id"], "properties": {"quote_id": {"type": "string",
              "format": "uuid"}}},
            "CollectionQuoteRef": {"type": "object", "required": ["collection_id", "quote_id"],
              "properties": {"collection_id": {"type": "string", "format": "uuid"}, "quote_id": {"type": "string",
                "format": "uuid"}}}
          }
        }
        """#
}
