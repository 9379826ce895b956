# The compose "cluster" profile's PostgreSQL nodes (Patroni) and etcd members: Debian 12's packages, the same
# versions scripts/cluster runs (patroni 3.0, etcd 3.4, PostgreSQL 15).
FROM debian:bookworm-slim
# Patroni creates the cluster itself: no default "main" cluster from postgresql-common.
RUN mkdir -p /etc/postgresql-common/createcluster.d \
    && echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.d/no-main.conf \
    && apt-get update && apt-get install -y --no-install-recommends \
      postgresql-15 patroni etcd-server curl ca-certificates util-linux \
    && rm -rf /var/lib/apt/lists/*
COPY patroni.yml.in /etc/patroni/patroni.yml.in
COPY patroni-start.sh /usr/local/bin/patroni-start.sh
