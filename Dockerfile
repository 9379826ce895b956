# The quote-server image: built with the Swift toolchain, run on a slim Debian with only the C libraries.
FROM swift:6.3-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends \
      pkg-config libpq-dev libmicrohttpd-dev libssl-dev libcurl4-openssl-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --product quote-server --static-swift-stdlib

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends \
      libpq5 libmicrohttpd12 libssl3 libcurl4 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 quoteserver
COPY --from=build /src/.build/release/quote-server /usr/local/bin/quote-server
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
