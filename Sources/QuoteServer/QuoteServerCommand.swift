import ArgumentParser

/// `quote-server`: serve (the default), migrate, seed, import.
@main
struct QuoteServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quote-server",
        abstract: "The QuoteVault REST API server.",
        discussion: """
            Configuration comes from the environment; a flag of the same name overrides it \
            (DATABASE_URL and --database-url). Without DATABASE_URL an embedded PostgreSQL is started \
            under QUOTEVAULT_DATA.
            """,
        subcommands: [
            Serve.self, Migrate.self, Seed.self, Import.self, PrintOpenAPI.self, PrintAnonKey.self,
            PrintServiceRoleKey.self, HealthCheck.self,
            BackupCommand.self, ListBackups.self, RestoreCommand.self, OwnerCommand.self,
        ],
        defaultSubcommand: Serve.self
    )
}
