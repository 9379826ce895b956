# PostgreSQL and its companions for docker-compose, all from Debian 12's packages: the default profile's `db`, and
# the "cluster" profile's etcd members, Patroni nodes and HAProxy (the versions scripts/cluster runs: PostgreSQL 15,
# Patroni 3.0, etcd 3.4, HAProxy 2.6, pgBackRest 2.45). Each package is pinned to its release series; Debian's
# point and security updates within it still apply.
FROM debian:bookworm-slim
# The postgres user has the official image's uid/gid 999 (the secrets are readable by that group, and a volume the
# official image made keeps its owner). Patroni creates its clusters itself: no default "main" cluster.
RUN groupadd --system --gid 999 postgres \
    && useradd --system --uid 999 --gid postgres --home-dir /var/lib/postgresql --shell /bin/bash postgres \
    && mkdir -p /etc/postgresql-common/createcluster.d \
    && echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.d/no-main.conf \
    && apt-get update && apt-get install -y --no-install-recommends \
      postgresql-15 'patroni=3.0.*' 'etcd-server=3.4.*' 'haproxy=2.6.*' 'pgbackrest=2.45*' \
      curl ca-certificates util-linux locales \
    && rm -rf /var/lib/apt/lists/* \
    && localedef -i en_US -c -f UTF-8 en_US.UTF-8
COPY patroni.yml.in /etc/patroni/patroni.yml.in
COPY patroni-start.sh postgres-start.sh /usr/local/bin/
# Patroni 3.0.2's etcd3 leader-key renewal made conditional, as in 3.0.3 (a primary back from a hang must not take
# the key back from the node promoted meanwhile): deploy/patroni-leader-key-fix.py.
COPY patroni-leader-key-fix.py /usr/local/lib/quotevault/
RUN python3 /usr/local/lib/quotevault/patroni-leader-key-fix.py /usr/lib/python3/dist-packages/patroni
