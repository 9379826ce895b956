import ArgumentParser
import Foundation
import Logging
import PGClient
import QuoteVault

/// `quote-server owner add|list|remove`: the people who may use the owners' console.
struct OwnerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "owner", abstract: "Manage the owners who may sign in to the console at /console.",
        subcommands: [Add.self, List.self, Remove.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add an owner (or keep an existing one) and print a one-time sign-in link (15 minutes).")

        @OptionGroup var options: ServerOptions
        @Argument(help: "The owner's email address.")
        var email: String

        func run() async throws {
            let token = try await OwnerDatabase.run(options) { try await OwnerDirectory(pool: $0).add(email: email) }
            let publicURL = try OwnerDatabase.publicURL(options)
            print("\(publicURL)/console/sign-in?token=\(token)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the owners.")

        @OptionGroup var options: ServerOptions

        func run() async throws {
            let owners = try await OwnerDatabase.run(options) { try await OwnerDirectory(pool: $0).list() }
            let formatter = ISO8601DateFormatter()
            for owner in owners {
                print(
                    "\(owner.email)\tadded \(formatter.string(from: owner.createdAt))"
                        + (owner.hasSecondFactor ? "\tsecond factor" : ""))
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an owner; their sessions end at once.")

        @OptionGroup var options: ServerOptions
        @Argument(help: "The owner's email address.")
        var email: String

        func run() async throws {
            let removed = try await OwnerDatabase.run(options) {
                try await OwnerDirectory(pool: $0).remove(email: email)
            }
            guard removed else { throw ValidationError("\(email) is not an owner") }
            print("removed \(email)")
        }
    }
}

/// What the owner commands share: the database, migrated, for the length of one command.
enum OwnerDatabase {
    static func run<T>(_ options: ServerOptions, _ body: (PGPool) async throws -> T) async throws -> T {
        try await Database.withMigrated(options, logger: try options.makeLogger()) { pool, _ in
            do {
                return try await body(pool)
            } catch let error as QuoteVaultError {
                throw ValidationError("\(error)")
            }
        }
    }

    /// The base of sign-in links: `SUPABASE_PUBLIC_URL`, else `http://HOST:PORT`, as the server's own links.
    static func publicURL(_ options: ServerOptions) throws -> String {
        if let url = options.value(options.supabasePublicURL, "SUPABASE_PUBLIC_URL") {
            return url.hasSuffix("/") ? String(url.dropLast()) : url
        }
        let host = options.value(options.host, "HOST") ?? "127.0.0.1"
        return "http://\(host):\(try options.intValue(options.port, "PORT", default: 8080))"
    }
}
