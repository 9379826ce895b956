extension OpenAPIDocument {
    static let quotesFragment = #"""
        {
          "paths": {
            "/v1/quotes": {"get": {"operationId": "listQuotes", "tags": ["Quotes"],
              "summary": "Quotes, newest first (created_at desc, then id desc)",
              "description": "Offset pages (page, page_size) or keyset pages (cursor = the previous page's \#
        next_cursor; page is then null). A cursor walk never repeats or skips a quote that existed when it began, \#
        and costs the same at any depth. total is the whole count.",
              "parameters": [{"$ref": "#/components/parameters/Category"}, {"$ref": "#/components/parameters/Page"},
                {"$ref": "#/components/parameters/PageSize"}, {"$ref": "#/components/parameters/Cursor"}],
              "responses": {
                "304": {"$ref": "#/components/responses/NotModified"},
                "200": {"description": "A page of quotes",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/QuotePage"}}}},
                "422": {"$ref": "#/components/responses/ValidationFailed"}}}},
            "/v1/quotes/search": {"get": {"operationId": "searchQuotes", "tags": ["Quotes"],
              "summary": "Search quotes by keyword (text) or author",
              "description": "Literal, case-insensitive, Unicode-aware substring match: every result contains q \#
        (after trimming) in its text (type=keyword) or author (type=author); %, _ and \\ match themselves. Ranking: \#
        q as a whole word first, then q at the start of a word, then q anywhere; ties newest first (created_at \#
        desc, id desc). Offset pages only (next_cursor is always null). total is exact up to 1,000 matches; beyond, \#
        it is 1000 and total_is_exact is false. Cost class expensive unless its answer is cached (then a cheap read): \#
        at most 2 at once per address (beyond: 429) \#
        and EXPENSIVE_CONCURRENCY in all (beyond: 503), both with Retry-After and at once; statements cut after \#
        EXPENSIVE_STATEMENT_TIMEOUT (3 s, then 503).",
              "parameters": [
                {"name": "q", "in": "query", "required": true, "schema": {"type": "string", "minLength": 1,
                  "maxLength": 200}},
                {"name": "type", "in": "query", "schema": {"type": "string", "enum": ["keyword", "author"],
                  "default": "keyword"}},
                {"$ref": "#/components/parameters/Category"}, {"$ref": "#/components/parameters/Page"},
                {"$ref": "#/components/parameters/PageSize"}],
              "responses": {
                "304": {"$ref": "#/components/responses/NotModified"},
                "200": {"description": "Matching quotes, best first",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SearchPage"}}}},
                "422": {"$ref": "#/components/responses/ValidationFailed"},
                "429": {"$ref": "#/components/responses/TooManyRequests"}}}},
            "/v1/quotes/{id}": {"get": {"operationId": "getQuote", "tags": ["Quotes"], "summary": "One quote",
              "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
              "responses": {
                "304": {"$ref": "#/components/responses/NotModified"},
                "200": {"description": "The quote",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Quote"}}}},
                "404": {"$ref": "#/components/responses/NotFound"}}}},
            "/v1/categories": {"get": {"operationId": "listCategories", "tags": ["Quotes"],
              "summary": "All five categories with their quote counts",
              "responses": {
                "304": {"$ref": "#/components/responses/NotModified"},
                "200": {"description": "Every category, even when empty", "content": {"application/json": {"schema": {
                  "type": "object", "required": ["items"], "properties": {"items": {"type": "array", "items": {
                    "type": "object", "required": ["category", "count"],
                    "properties": {"category": {"$ref": "#/components/schemas/Category"}, "count": {"type": "integer",
                      "minimum": 0}}}}}}}}}}}},
            "/v1/qotd": {"get": {"operationId": "quoteOfTheDay", "tags": ["Quote of the day"],
              "summary": "The quote of a date (default: today in tz)",
              "description": "The same quote for a date for every client and instance, forever. No quote repeats \#
        within 365 consecutive days while the corpus has at least 365 quotes. Cache-Control lets clients keep \#
        today's answer until the date changes in tz; a named date's answer is immutable once the date has begun \#
        somewhere (UTC+14); before that, an owner may still pin a quote to it in the console, so it is cached for \#
        60 seconds.",
              "parameters": [
                {"name": "date", "in": "query", "description": "YYYY-MM-DD, from 2000-01-01 to 366 days after today",
                  "schema": {"type": "string", "format": "date"}},
                {"name": "tz", "in": "query", "description": "IANA time zone (default UTC)",
                  "schema": {"type": "string", "default": "UTC"}}],
              "responses": {
                "304": {"$ref": "#/components/responses/NotModified"},
                "200": {"description": "The date and its quote",
                  "headers": {"Cache-Control": {"schema": {"type": "string"}}},
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/DatedQuote"}}}},
                "422": {"$ref": "#/components/responses/ValidationFailed"}}}},
            "/v1/qotd/range": {"get": {"operationId": "quoteOfTheDayRange", "tags": ["Quote of the day"],
              "summary": "Quotes of the days from..to (both included, at most 31), for widget timelines",
              "parameters": [
                {"name": "from", "in": "query", "required": true, "schema": {"type": "string", "format": "date"}},
                {"name": "to", "in": "query", "required": true, "schema": {"type": "string", "format": "date"}}],
              "responses": {
                "304": {"$ref": "#/components/responses/NotModified"},
                "200": {"description": "One item per date, in date order", "content": {"application/json": {"schema": {
                  "type": "object", "required": ["items"], "properties": {"items": {"type": "array",
                    "items": {"$ref": "#/components/schemas/DatedQuote"}}}}}}},
                "422": {"$ref": "#/components/responses/ValidationFailed"}}}}
          },
          "schemas": {
            "DatedQuote": {"type": "object", "required": ["date", "quote"],
              "properties": {"date": {"type": "string", "format": "date"},
                "quote": {"$ref": "#/components/schemas/Quote"}}}
          }
        }
        """#
}
