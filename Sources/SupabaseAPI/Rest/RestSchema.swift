import QuoteVault

/// The tables `/rest/v1` exposes, described once as data: their columns and types, what a client may write and
/// how they relate (for embedding); whose rows they are comes from `RowOwner`. Every identifier in
/// generated SQL comes from here, never from a request. What a table's rows must satisfy whoever writes them is
/// the table's own (constraints and triggers in the migrations); what this door adds is declared here, per table.
struct RestSchema {
    struct Column {
        let name: String
        /// The PostgreSQL type request values are cast to (`$n::type`), so bad input fails as 22P02.
        let type: String
        let writable: Bool
        /// The services' own check of a written value, which returns it as stored (e.g. a collection's name trimmed).
        var normalize: (@Sendable (JSONValue) throws -> JSONValue)?
    }

    /// A foreign key seen from one side: `local` column(s) of this table against `foreign` of `table`.
    struct Relation {
        enum Cardinality { case toOne, toMany }
        let table: String
        let local: String
        let foreign: String
        let cardinality: Cardinality
    }

    /// What the service role may do to a table (it writes every other table like the database's owner).
    enum ServiceRoleWrites {
        case all
        /// New rows only; `hint` says why existing ones stay.
        case insertOnly(hint: String)
        /// Nothing; `hint` says who writes the table.
        case none(hint: String)
    }

    /// How a user's writes reach a table.
    enum Writer {
        /// Generated SQL under the table's row rule.
        case statement
        /// The user's one profile row, through `ProfileService` (its validation, `preferences` as JSONB).
        case profileService
    }

    struct Table {
        let name: String
        let columns: [Column]
        let primaryKey: [String]
        let relations: [Relation]
        /// Set to now() on every update.
        let touchesUpdatedAt: Bool
        /// Whose rows these are (the declaration `/v1` shares); nil: anyone reads, no user writes.
        var owner: RowOwner?
        /// False for rows that are part of an account (deleted with it, `DELETE /v1/me`): as PostgREST with
        /// row-level security and no delete policy, a DELETE sees none of them (0 rows, nothing changed).
        var deletable = true
        var serviceRoleWrites = ServiceRoleWrites.all
        var writer = Writer.statement
        /// Columns an index leads with, so an order by one reads only the page (migrations 0001 and 0060).
        var orderedByIndex: Set<String> = []

        func column(_ name: String) -> Column? { columns.first { $0.name == name } }
        func relation(to table: String) -> Relation? { relations.first { $0.table == table } }
    }

    /// Columns the full-text operators apply to, and the text search configurations they accept: exactly the
    /// expression indexes of migration 0006 (`to_tsvector('<configuration>', column)`), so no search scans the table.
    static let fullTextColumns: [String: Set<String>] = ["quotes": ["text", "author"]]
    static let fullTextConfigurations: Set<String> = ["english", "simple"]
    static let defaultFullTextConfiguration = "english"

    static let tables: [String: Table] = Dictionary(
        uniqueKeysWithValues: [
            Table(
                name: "quotes",
                columns: [
                    Column(name: "id", type: "uuid", writable: false),
                    Column(name: "text", type: "text", writable: false),
                    Column(name: "author", type: "text", writable: false),
                    Column(name: "category", type: "text", writable: false),
                    Column(name: "created_at", type: "timestamptz", writable: false),
                ],
                primaryKey: ["id"], relations: [], touchesUpdatedAt: false,
                orderedByIndex: ["id", "created_at", "author"]),
            Table(
                name: "quote_of_day",
                columns: [
                    Column(name: "date", type: "date", writable: false),
                    Column(name: "quote_id", type: "uuid", writable: false),
                    Column(name: "created_at", type: "timestamptz", writable: false),
                ],
                primaryKey: ["date"],
                relations: [Relation(table: "quotes", local: "quote_id", foreign: "id", cardinality: .toOne)],
                touchesUpdatedAt: false,
                serviceRoleWrites: .insertOnly(hint: "a date's quote is kept once chosen; pin dates that have none"),
                orderedByIndex: ["date", "quote_id"]),
            Table(
                name: "profiles",
                columns: [
                    Column(name: "id", type: "uuid", writable: true),
                    Column(name: "display_name", type: "text", writable: true),
                    Column(name: "avatar_url", type: "text", writable: true),
                    Column(name: "preferences", type: "jsonb", writable: true),
                    Column(name: "created_at", type: "timestamptz", writable: false),
                    Column(name: "updated_at", type: "timestamptz", writable: false),
                ],
                primaryKey: ["id"], relations: [], touchesUpdatedAt: true, owner: .profiles, deletable: false,
                serviceRoleWrites: .none(hint: "profiles are written by their owners"), writer: .profileService),
            Table(
                name: "user_favorites",
                columns: [
                    Column(name: "user_id", type: "uuid", writable: true),
                    Column(name: "quote_id", type: "uuid", writable: true),
                    Column(name: "created_at", type: "timestamptz", writable: false),
                ],
                primaryKey: ["user_id", "quote_id"],
                relations: [Relation(table: "quotes", local: "quote_id", foreign: "id", cardinality: .toOne)],
                touchesUpdatedAt: false, owner: .favorites),
            Table(
                name: "collections",
                columns: [
                    Column(name: "id", type: "uuid", writable: true),
                    Column(name: "user_id", type: "uuid", writable: true),
                    Column(
                        name: "name", type: "text", writable: true,
                        normalize: { value in
                            guard let name = value.stringValue else {
                                throw QuoteVaultError.invalid("name", "must be a string")
                            }
                            return .string(try CollectionsService.validateName(name))
                        }),
                    Column(name: "created_at", type: "timestamptz", writable: false),
                    Column(name: "updated_at", type: "timestamptz", writable: false),
                ],
                primaryKey: ["id"],
                relations: [
                    Relation(table: "collection_quotes", local: "id", foreign: "collection_id", cardinality: .toMany)
                ],
                touchesUpdatedAt: true, owner: .collections),
            Table(
                name: "collection_quotes",
                columns: [
                    Column(name: "collection_id", type: "uuid", writable: true),
                    Column(name: "quote_id", type: "uuid", writable: true),
                    Column(name: "added_at", type: "timestamptz", writable: false),
                ],
                primaryKey: ["collection_id", "quote_id"],
                relations: [
                    Relation(table: "quotes", local: "quote_id", foreign: "id", cardinality: .toOne),
                    Relation(table: "collections", local: "collection_id", foreign: "id", cardinality: .toOne),
                ],
                touchesUpdatedAt: false, owner: .collectionQuotes),
        ].map { ($0.name, $0) })
}
