extension OpenAPIDocument {
    static let operationsFragment = #"""
        {
          "paths": {
            "/health": {"get": {"operationId": "health",
              "summary": "Liveness: the process serves HTTP (does not touch the database)",
              "responses": {"200": {"description": "Serving",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Status"}}}}}}},
            "/ready": {"get": {"operationId": "ready",
              "summary": "Readiness: the database answers and migrations are current (with read replicas, also \#
        while only a replica answers: then primary is unavailable, reads are served and writes answer 503); 503 \#
        while draining after SIGTERM",
              "responses": {"200": {"description": "Ready",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Status"}}}},
                            "503": {"$ref": "#/components/responses/ServiceUnavailable"}}}},
            "/metrics": {"get": {"operationId": "metrics",
              "summary": "Prometheus metrics: requests by route and status, latency histograms, DB pool, hashing \#
        queue, mail backlog, memory",
              "responses": {"200": {"description": "Prometheus text exposition format 0.0.4",
                "content": {"text/plain; version=0.0.4; charset=utf-8": {"schema": {"type": "string"}}}}}}},
            "/openapi.json": {"get": {"operationId": "openapi", "summary": "This document",
              "responses": {"200": {"description": "OpenAPI 3.1 document",
                "content": {"application/json": {"schema": {"type": "object"}}}}}}}
          },
          "responses": {
            "ServiceUnavailable": {"description": "The server is busy, or the database is unavailable: unreachable, \#
        no free pool connection within DB_ACQUIRE_TIMEOUT, read-only (failing over) or past the statement timeout; \#
        code service_unavailable",
              "headers": {"Retry-After": {"schema": {"type": "integer"}}}}
          },
          "schemas": {
            "Status": {"type": "object", "required": ["status"], "properties": {"status": {"type": "string"},
              "primary": {"type": "string", "enum": ["unavailable"]}}},
            "Problem": {"type": "object", "required": ["status", "code", "title"],
              "properties": {"status": {"type": "integer"}, "code": {"type": "string"}, "title": {"type": "string"},
                "detail": {"type": "string"},
                "errors": {"type": "array", "items": {"type": "object", "required": ["field", "message"],
                  "properties": {"field": {"type": "string"}, "message": {"type": "string"}}}}}}
          }
        }
        """#
}
