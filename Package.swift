// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "QuoteVaultServer",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "quote-server", targets: ["QuoteServer"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        // Prometheus exposition for /metrics (its metric types are swift-metrics' CoreMetrics handlers).
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
    ],
    targets: [
        // C libraries, found through pkg-config; only the module that wraps each one imports it.
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // libcurl's SMTP support delivers password-reset mail (no hand-written SMTP client).
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // zlib compresses answers (Content-Encoding: gzip) and tags them (crc32 for ETags).
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),

        // The one closed set of ways a request can fail (and the field errors of one), shared by every room.
        .target(name: "Failures"),
        // Day counts to and from proleptic Gregorian dates, shared by the database client and the HTTP layer.
        .target(name: "CivilCalendar"),
        // QR codes (byte mode, levels L and M, versions 1-20) drawn as SVG: the console's TOTP enrolment.
        .target(name: "QRCode"),
        // A thin, safe PostgreSQL client over libpq.
        .target(
            name: "PGClient",
            dependencies: [
                "CLibPQ", "CivilCalendar", "Failures", .product(name: "Logging", package: "swift-log"),
            ]),
        // Password hashing (scrypt), HS256 JWTs and opaque tokens over OpenSSL.
        .target(name: "AuthJWT", dependencies: ["COpenSSL"]),
        // A small HTTP/1.1 server over libmicrohttpd and the request pipeline: routing, each route's declared policy
        // (credentials checked once, body limit) and failures rendered in the route's dialect.
        .target(
            name: "HTTPServer",
            dependencies: [
                "AuthJWT", "CMicroHTTPD", "CZlib", "CivilCalendar", "Failures",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // A throwaway or persistent local PostgreSQL cluster driven by initdb/pg_ctl.
        .target(
            name: "EmbeddedPostgres",
            dependencies: [
                .product(name: "Logging", package: "swift-log")
            ]),
        // The business: schema migrations, accounts, quotes, library. Knows nothing of HTTP.
        .target(
            name: "QuoteVault",
            dependencies: [
                "PGClient", "AuthJWT", "CCurl", "Failures", .product(name: "Logging", package: "swift-log"),
            ]),
        // Surfaces: each mounts routes on the QuoteVault services and declares their policies; none knows another.
        // The Supabase-compatible surface (/auth/v1 GoTrue, /rest/v1 PostgREST, /storage/v1) on the QuoteVault
        // services.
        .target(
            name: "SupabaseAPI",
            dependencies: [
                "QuoteVault", "HTTPServer", "PGClient", "AuthJWT", .product(name: "Logging", package: "swift-log"),
            ]),
        // The owners' console (/console): server-rendered HTML pages on the QuoteVault services.
        .target(
            name: "Console",
            dependencies: [
                "QuoteVault", "HTTPServer", "Failures", "PGClient", "AuthJWT", "QRCode",
            ]),
        // The /v1 REST API (and operations routes) mounted on the QuoteVault services.
        .target(
            name: "QuoteAPI",
            dependencies: [
                "QuoteVault", "HTTPServer", "PGClient", "AuthJWT",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]),
        // The composition root: builds the services once, mounts the surfaces side by side, applies the stages
        // routes' policies ask for (cost admission, idempotency) and serves them.
        .target(
            name: "QuoteApp",
            dependencies: [
                "QuoteAPI", "SupabaseAPI", "Console", "QuoteVault", "HTTPServer", "PGClient", "AuthJWT",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The executable: commands and configuration around QuoteApp.
        .executableTarget(
            name: "QuoteServer",
            dependencies: [
                "QuoteApp", "QuoteAPI", "SupabaseAPI", "QuoteVault", "HTTPServer", "EmbeddedPostgres", "PGClient",
                "AuthJWT",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // jemalloc replaces glibc's malloc in the whole process: with many WebSockets' objects on glibc's heap,
            // every request's allocations cost more CPU (bench/README.md, realtime.sh).
            linkerSettings: [.linkedLibrary("jemalloc")]),

        // Test helpers: a test database (embedded when none is configured), the real server on loopback, a raw
        // HTTP/1.1 client, and what several test targets share (fixtures, Supabase headers, console forms, sync).
        .target(
            name: "TestSupport",
            dependencies: [
                "AuthJWT", "CZlib", "EmbeddedPostgres", "PGClient", "QuoteVault", "QuoteAPI", "QuoteApp", "HTTPServer",
                .product(name: "Logging", package: "swift-log"),
            ], path: "Tests/TestSupport"),
        // One test target per module, named after it. Tests talk to a real PostgreSQL and, above QuoteVault, to the
        // real server over loopback HTTP.
        .testTarget(name: "PGClientTests", dependencies: ["PGClient", "TestSupport"]),
        .testTarget(name: "AuthJWTTests", dependencies: ["AuthJWT", "TestSupport"]),
        .testTarget(name: "QRCodeTests", dependencies: ["QRCode"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "Failures", "TestSupport"]),
        // The business: services, SQL (search, quotas, lock order), plans, migrations, imports.
        .testTarget(
            name: "QuoteVaultTests",
            dependencies: [
                "QuoteVault", "PGClient", "AuthJWT", "TestSupport", .product(name: "Logging", package: "swift-log"),
            ]),
        // The /v1 surface and the operations routes.
        .testTarget(
            name: "QuoteAPITests",
            dependencies: ["QuoteAPI", "QuoteVault", "TestSupport", "PGClient", "AuthJWT", "HTTPServer"]),
        // The Supabase-compatible surface: /auth/v1, /rest/v1, /storage/v1.
        .testTarget(
            name: "SupabaseAPITests",
            dependencies: ["SupabaseAPI", "QuoteVault", "TestSupport", "PGClient", "AuthJWT"]),
        // The owners' console.
        .testTarget(
            name: "ConsoleTests",
            dependencies: ["Console", "QuoteAPI", "QuoteVault", "TestSupport", "PGClient", "AuthJWT", "HTTPServer"]),
        // The composition root: the stages (cost admission, fair share, idempotency, client address), failures in
        // every dialect, read replicas, shutdown.
        .testTarget(
            name: "QuoteAppTests",
            dependencies: [
                "QuoteApp", "QuoteAPI", "SupabaseAPI", "QuoteVault", "TestSupport", "PGClient", "AuthJWT", "HTTPServer",
                "EmbeddedPostgres", .product(name: "Logging", package: "swift-log"),
            ]),
        // The quote-server executable's commands, run as a child process.
        .testTarget(
            name: "QuoteServerTests",
            dependencies: ["QuoteAPI", "QuoteVault", "TestSupport", "PGClient", "AuthJWT"]),
    ]
)
