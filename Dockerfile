# The quote-server image: built with the Swift toolchain, run on a slim Debian with only the C libraries.
# Swift's own libraries are linked in (--static-swift-stdlib), so the runtime needs nothing from the toolchain.
# Package.resolved, when the checkout has one, pins the dependencies' dependencies too (it is not committed:
# Package.swift pins the direct ones with exact:); without it the build resolves them, which needs the network.
# Without Docker Hub: build the binary on the host and use deploy/server-host-binary.Dockerfile (.ci/compose-smoke).
FROM swift:6.3-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends \
      pkg-config libpq-dev libmicrohttpd-dev libssl-dev libcurl4-openssl-dev zlib1g-dev libjemalloc-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift Package.resolve[d] ./
RUN swift package resolve
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --product quote-server --static-swift-stdlib

# Everything but the binary (the host-binary image starts from this stage too). The libraries are the binary's
# `ldd` list, by Debian package.
FROM debian:bookworm-slim AS runtime-base
RUN apt-get update && apt-get install -y --no-install-recommends \
      libpq5 libmicrohttpd12 libssl3 libcurl4 zlib1g libjemalloc2 libstdc++6 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 quoteserver
# Migrations, the schema definitions and the bundled corpus are found here (see ResourceLocator).
COPY migrations /usr/share/quote-server/migrations
COPY schema /usr/share/quote-server/schema
COPY data /usr/share/quote-server/data
USER quoteserver
ENV HOST=0.0.0.0 PORT=8080
EXPOSE 8080
# The binary checks itself: the slim image has no curl, and /bin/sh (dash) has no /dev/tcp.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s CMD ["quote-server", "healthcheck", "--timeout", "3"]
ENTRYPOINT ["quote-server"]
CMD ["serve"]

FROM runtime-base AS runtime
COPY --from=build /src/.build/release/quote-server /usr/local/bin/quote-server
