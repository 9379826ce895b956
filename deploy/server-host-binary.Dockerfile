# The quote-server image from a binary built on the host, for machines without Docker Hub (no swift image). The
# host must be Debian 12 (the binary links against its libpq, OpenSSL, libcurl). CONTEXT holds migrations/, schema/,
# data/, the binary as quote-server and swift-libs/: the toolchain's libraries the binary loads (none when it was
# built with --static-swift-stdlib). .ci/compose-smoke lays it out and runs:
#   docker build --target runtime-base -t quotevault-server-base:local CONTEXT
#   docker build -f deploy/server-host-binary.Dockerfile -t quotevault-server:local CONTEXT
ARG BASE=quotevault-server-base:local
FROM ${BASE}
USER root
COPY swift-libs/ /usr/local/lib/swift/
RUN echo /usr/local/lib/swift >/etc/ld.so.conf.d/swift.conf && ldconfig
COPY quote-server /usr/local/bin/quote-server
USER quoteserver
