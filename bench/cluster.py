"""Proofs against the local cluster of scripts/cluster (everything on 127.0.0.1), for bench/cluster.sh.

Every loop is bounded in count and time. Scenarios (each prints its figures and a PASS/FAIL line):
  same-answers   every instance gives the same pages, search, categories and quotes of the day, also when the
                 three are asked for a new date at the same instant
  sessions       a logout through one instance refuses the token on the others at once; failed-login throttle
                 counts are shared
  reset          a password reset requested and confirmed through a third instance refuses the access and refresh
                 tokens of sessions opened on the other two, on every instance at once (the mail's token is read from
                 the mail_outbox table, as tests do)
  rolling        the three instances restarted one by one (SIGTERM: drain, stop, start) under mixed load
  kill           an instance killed with SIGKILL under load: time until HAProxy stops routing to it
  ha             under one load (reads, favorite writes, logins through HAProxy), one phase after another: SIGKILL
                 the primary (Patroni and PostgreSQL); once it has rejoined on its own (<= 60 s) SIGKILL the new one;
                 stop the synchronous standby for 15 s; stop replay on the asynchronous replica (it must leave the
                 read port); switchover; rolling restart of the instances. Per phase: 503s, 500s (none allowed),
                 other failures (none allowed), and when the last failure came after the fault; favorite writes
                 acknowledged, present and lost (none allowed), the longest pause between acknowledgements
  strict         synchronous_mode_strict: both standbys stopped, writes must not be acknowledged while reads go on;
                 writes resume when one standby is back
  load           the load alone for --seconds, a line every 5 s (`scripts/cluster load`)
After each load scenario every acknowledged favorite write is looked up in the database (count, lost).
"""
import argparse
import http.client
import json
import os
import random
import re
import signal
import subprocess
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLUSTER = os.path.join(ROOT, "scripts", "cluster")
PASSWORD = "cluster proof password 1"
NEW_PASSWORD = "cluster proof password 2"


def call(port, method, path, body=None, token=None, timeout=10, answer_headers=None, source="127.0.0.1"):
    """(status, body); status 0 when the connection failed. `answer_headers`, a dict, gets the answer's headers.
    `source`: the loopback address to connect from (HAProxy forwards it; the instances count clients by it)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=(source, 0))
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        response = connection.getresponse()
        if answer_headers is not None:
            answer_headers.update((name.lower(), value) for name, value in response.getheaders())
        return response.status, response.read()
    except (OSError, http.client.HTTPException):
        return 0, b""
    finally:
        connection.close()


def cluster(*arguments):
    subprocess.run([CLUSTER, *map(str, arguments)], check=True)


def psql(url, sql):
    return subprocess.run(["psql", "-XAtq", url, "-c", sql], capture_output=True, text=True, timeout=30).stdout.strip()


def session(port, email):
    status, data = call(port, "POST", "/v1/auth/signup", {"email": email, "password": PASSWORD})
    if status != 201:
        status, data = call(port, "POST", "/v1/auth/login", {"email": email, "password": PASSWORD})
    return json.loads(data)


def haproxy_state(server, backend="quote_servers"):
    out = subprocess.run([CLUSTER, "haproxy", "show stat"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        fields = line.split(",")
        if len(fields) > 17 and fields[0] == backend and fields[1] == server:
            return fields[17]
    return "?"


def wait_for(condition, seconds, step=0.05):
    """Seconds until condition() held, or None after `seconds`."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if condition():
            return time.monotonic() - started
        time.sleep(step)
    return None


def by_haproxy(status, body, headers):
    """A 503 HAProxy gave itself (no instance in rotation) is told apart from an instance's 503, and an instance's
    503 must be the contract's: `service_unavailable` with a `Retry-After` in seconds (else it is marked, and the
    scenario fails)."""
    if status != 503:
        return ""
    if body.lstrip().startswith(b"<html"):
        return "(haproxy)"
    try:
        problem = json.loads(body)
    except ValueError:
        problem = {}
    if problem.get("code") != "service_unavailable" or not headers.get("retry-after", "").isdigit():
        return MALFORMED
    # The expensive class's global cap (a search waiting for a place), not the database.
    return "(busy)" if problem.get("detail", "").startswith("The server is busy;") else ""


MALFORMED = "(503 not service_unavailable with Retry-After)"


class Load:
    """Steady mixed traffic through HAProxy: reads (pages, a quote, search, quote of the day), logins and favorite
    writes, each worker paced; records every answer and every acknowledged write. Each worker is a client of its
    own, on its own loopback address (127.0.0.10 on): the instances share database time out per client address, and
    one address carrying the whole load would be throttled (429) as one heavy client whenever the pool is short."""

    def __init__(self, args, quote_ids, writers, readers=6, logins=1, pace=0.02, writer_pace=None):
        self.args, self.quote_ids, self.pace = args, quote_ids, pace
        self.writer_pace = pace if writer_pace is None else writer_pace
        self.lock = threading.Lock()
        self.stop_flag = threading.Event()
        self.log = []  # (seconds since start, kind, status)
        self.acknowledged = {}  # user id -> set of quote ids
        self.write_spans = []  # (sent, answered, status), seconds since start
        self.acks = []  # (answered, user id, quote id) of every acknowledged write, seconds since start
        self.writers = writers
        self.threads = [threading.Thread(target=self.reader, args=(i,)) for i in range(readers)]
        self.threads += [threading.Thread(target=self.writer, args=(w, n)) for n, w in enumerate(writers)]
        self.threads += [threading.Thread(target=self.login, args=(n,)) for n in range(logins if writers else 0)]
        self.started = time.monotonic()

    def start(self):
        for thread in self.threads:
            thread.start()
        return self

    def stop(self):
        self.stop_flag.set()
        for thread in self.threads:
            thread.join(timeout=40)

    def record(self, kind, status):
        with self.lock:
            self.log.append((time.monotonic() - self.started, kind, status))

    def reader(self, index):
        rng = random.Random(index)
        deadline = self.started + self.args.max_seconds
        while not self.stop_flag.is_set() and time.monotonic() < deadline:
            choice = rng.random()
            if choice < 0.4:
                kind, path = "read/page", f"/v1/quotes?limit=20&page={rng.randint(1, 50)}"
            elif choice < 0.7:
                kind, path = "read/quote", f"/v1/quotes/{rng.choice(self.quote_ids)}"
            elif choice < 0.85:
                word = rng.choice(["life", "love", "time", "people", "world"])
                kind, path = "read/search", f"/v1/quotes/search?q={word}"
            else:
                kind, path = "read/qotd", f"/v1/qotd?date=2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
            headers = {}
            status, body = call(self.args.port, "GET", path, answer_headers=headers, source=f"127.0.0.{10 + index}")
            self.record(kind + by_haproxy(status, body, headers), status)
            time.sleep(self.pace)

    def writer(self, user, index):
        deadline = self.started + self.args.max_seconds
        for quote in user["quotes"]:
            if self.stop_flag.is_set() or time.monotonic() > deadline:
                return
            sent = time.monotonic() - self.started
            headers = {}
            status, body = call(self.args.port, "PUT", f"/v1/favorites/{quote}", token=user["token"], timeout=35,
                                answer_headers=headers, source=f"127.0.0.{100 + index}")
            self.record("write" + by_haproxy(status, body, headers), status)
            with self.lock:
                self.write_spans.append((sent, time.monotonic() - self.started, status))
            if 200 <= status < 300:
                with self.lock:
                    self.acknowledged.setdefault(user["id"], set()).add(quote)
                    self.acks.append((time.monotonic() - self.started, user["id"], quote))
            time.sleep(self.writer_pace)

    def login(self, index):
        deadline = self.started + self.args.max_seconds
        user = self.writers[0]
        while not self.stop_flag.is_set() and time.monotonic() < deadline:
            # A login writes a session: like a write, it may wait for a synchronous standby.
            headers = {}
            status, body = call(self.args.port, "POST", "/v1/auth/login",
                                {"email": user["email"], "password": PASSWORD}, timeout=35, answer_headers=headers,
                                source=f"127.0.0.{200 + index}")
            self.record("login" + by_haproxy(status, body, headers), status)
            time.sleep(0.2)

    def failures(self, since=0.0, until=None):
        with self.lock:
            return [(t, kind, status) for t, kind, status in self.log
                    if t >= since and (until is None or t <= until) and not (200 <= status < 300)]

    def total(self):
        with self.lock:
            return len(self.log)

    def lost_writes(self, url):
        """(acknowledged, missing from the database)."""
        acknowledged = missing = 0
        for user, quotes in self.acknowledged.items():
            stored = set(psql(url, f"SELECT quote_id FROM user_favorites WHERE user_id = '{user}'").split())
            acknowledged += len(quotes)
            missing += len(quotes - stored)
        return acknowledged, missing


def make_writers(args, count, quote_ids, per_user):
    """`count` new users, each with its own order of `per_user` distinct quotes to favorite."""
    writers = []
    for index in range(count):
        email = f"writer-{index}-{int(time.time() * 1000)}@cluster.local"
        answer = session(args.port, email)
        quotes = random.Random(email).sample(quote_ids, min(per_user, len(quote_ids)))
        writers.append({"email": email, "token": answer["access_token"], "id": answer["user"]["id"], "quotes": quotes})
    return writers


def summary(name, load, extra, ok):
    failures = load.failures()
    kinds = {}
    for _, kind, status in failures:
        kinds[f"{kind}:{status}"] = kinds.get(f"{kind}:{status}", 0) + 1
    acknowledged, lost = load.lost_writes(load.args.write_url)
    print(f"{name}: {load.total()} requests, {len(failures)} failed {kinds or ''}; "
          f"acknowledged writes {acknowledged}, lost {lost}{extra}")
    malformed = sum(1 for _, kind, _ in failures if MALFORMED in kind)
    ok = ok and lost == 0 and malformed == 0
    print(f"  {'PASS' if ok else 'FAIL'}")
    return ok


# --- scenarios ------------------------------------------------------------------------------------------------

def same_answers(args, quote_ids):
    paths = ["/v1/quotes?limit=20", "/v1/quotes?limit=20&category=love", "/v1/quotes?limit=20&page=7",
             "/v1/quotes/search?q=life", "/v1/quotes/search?q=Twain&field=author", "/v1/categories",
             f"/v1/quotes/{quote_ids[0]}", "/v1/qotd?date=2026-01-01"]
    differing = [path for path in paths if len({call(port, "GET", path)[1] for port in args.instances}) != 1]
    # Three instances asked for dates nobody asked before, at the same instant.
    today = time.gmtime()
    dates = [f"{today.tm_year + 1}-{month:02d}-{day:02d}" for month, day in
             random.Random(time.time()).sample([(m, d) for m in range(1, 4) for d in range(1, 28)], 5)]
    dates = [d for d in dates if d <= time.strftime("%Y-%m-%d", time.gmtime(time.time() + 360 * 86400))]
    disagreements = 0
    for date in dates:
        barrier, answers = threading.Barrier(len(args.instances)), {}

        def ask(port):
            barrier.wait()
            status, data = call(port, "GET", f"/v1/qotd?date={date}")
            answers[port] = json.loads(data)["quote"]["id"] if status == 200 else f"status {status}"

        threads = [threading.Thread(target=ask, args=(port,)) for port in args.instances]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=20)
        disagreements += len(set(answers.values())) != 1
    ok = not differing and disagreements == 0
    print(f"same-answers: {len(paths)} paths on {len(args.instances)} instances, differing: {differing or 'none'}; "
          f"{len(dates)} new dates asked of all instances at once, disagreements: {disagreements}")
    print(f"  {'PASS' if ok else 'FAIL'}")
    return ok


def sessions(args):
    first, second, third = args.instances[:3]
    answer = session(first, f"logout-{int(time.time() * 1000)}@cluster.local")
    token = answer["access_token"]
    before = [call(port, "GET", "/v1/me", token=token)[0] for port in args.instances]
    logout = call(second, "POST", "/v1/auth/logout", token=token)[0]
    after = [call(port, "GET", "/v1/me", token=token)[0] for port in args.instances]
    refresh = call(third, "POST", "/v1/auth/refresh", {"refresh_token": answer["refresh_token"]})[0]
    email = f"throttle-{int(time.time() * 1000)}@cluster.local"
    session(first, email)
    wrong = [call(args.instances[i % 3], "POST", "/v1/auth/login", {"email": email, "password": "wrong password 1"})[0]
             for i in range(10)]
    blocked = [call(port, "POST", "/v1/auth/login", {"email": email, "password": "wrong password 1"})[0]
               for port in args.instances]
    ok = before == [200] * 3 and logout == 204 and after == [401] * 3 and refresh == 401 \
        and wrong == [401] * 10 and blocked == [429] * 3
    print(f"sessions: /v1/me before logout {before}, logout via another instance {logout}, after {after}, "
          f"refresh via a third {refresh}; 10 failed logins spread over 3 instances {sorted(set(wrong))}, "
          f"then on each instance {blocked}")
    print(f"  {'PASS' if ok else 'FAIL'}")
    return ok


def reset(args):
    first, second, third = args.instances[:3]
    email = f"reset-{int(time.time() * 1000)}@cluster.local"
    old = [session(first, email), session(second, email)]  # signed up on the first, logged in on the second
    before = [call(port, "GET", "/v1/me", token=s["access_token"])[0] for s in old for port in args.instances]
    requested = call(third, "POST", "/v1/auth/password-reset", {"email": email})[0]
    # The mail is written to the outbox in the request's transaction; its body carries the link with the token.
    mail = psql(args.write_url, f"SELECT body FROM mail_outbox WHERE recipient = '{email}' ORDER BY id DESC LIMIT 1")
    token = (re.search(r"[?&]token=([A-Za-z0-9_-]+)", mail) or [None, ""])[1]
    status, data = call(third, "POST", "/v1/auth/password-reset/confirm", {"token": token, "password": NEW_PASSWORD})
    confirmed_at = time.monotonic()
    # At once: every old access token on every instance, every old refresh token through every instance.
    access = [call(port, "GET", "/v1/me", token=s["access_token"])[0] for s in old for port in args.instances]
    refresh = [call(port, "POST", "/v1/auth/refresh", {"refresh_token": s["refresh_token"]})[0]
               for s in old for port in args.instances]
    checked_in = time.monotonic() - confirmed_at
    fresh = json.loads(data).get("access_token") if status == 200 else None
    new_session = [call(port, "GET", "/v1/me", token=fresh)[0] for port in args.instances]
    old_password = call(first, "POST", "/v1/auth/login", {"email": email, "password": PASSWORD})[0]
    new_password = call(second, "POST", "/v1/auth/login", {"email": email, "password": NEW_PASSWORD})[0]
    reused = call(first, "POST", "/v1/auth/password-reset/confirm", {"token": token, "password": "cluster proof password 3"})[0]
    ok = before == [200] * 6 and requested == 202 and token and status == 200 and access == [401] * 6 \
        and refresh == [401] * 6 and new_session == [200] * 3 and old_password == 401 and new_password == 200 \
        and reused == 400
    print(f"reset: 2 sessions (opened on instances 1 and 2), /v1/me before {before}; reset requested {requested} and "
          f"confirmed {status} via instance 3; then old access tokens on all 3 {access}, old refresh tokens through all "
          f"3 {refresh} (all 12 checked within {checked_in:.2f} s of the confirmation); the new session on all 3 "
          f"{new_session}; login with the old password {old_password}, the new {new_password}; the reset token again "
          f"{reused}")
    print(f"  {'PASS' if ok else 'FAIL'}")
    return ok


def rolling(args, quote_ids):
    load = Load(args, quote_ids, make_writers(args, 2, quote_ids, 2000)).start()
    time.sleep(3)
    for n in range(1, len(args.instances) + 1):
        cluster("instance", "stop", n)  # SIGTERM: /ready 503 for the drain period, then a graceful stop
        cluster("instance", "start", n)
        wait_for(lambda: haproxy_state(f"s{n}") == "UP", 15)
    time.sleep(2)
    load.stop()
    return summary("rolling restart of 3 instances", load, "", not load.failures())


def kill(args, quote_ids):
    load = Load(args, quote_ids, make_writers(args, 2, quote_ids, 2000)).start()
    time.sleep(3)
    killed_at = time.monotonic() - load.started
    cluster("instance", "kill", 2)
    out = wait_for(lambda: haproxy_state("s2") != "UP", 15, step=0.02)
    time.sleep(3)
    load.stop()
    cluster("instance", "start", 2)
    wait_for(lambda: haproxy_state("s2") == "UP", 15)
    after = load.failures(since=killed_at + (out or 0) + 0.5)
    return summary("SIGKILL of one instance", load,
                   f"; HAProxy stopped routing to it after {out:.2f} s; failures later than 0.5 s after that: {len(after)}"
                   if out is not None else "; HAProxy never marked it down", out is not None and not after)


# --- Patroni: failovers, standby faults, switchover under one steady load ------------------------------------

def cluster_out(*arguments):
    return subprocess.run([CLUSTER, *map(str, arguments)], capture_output=True, text=True, check=True).stdout.strip()


def members(args):
    """Patroni's view: {name: member} from the first REST API that answers."""
    for port in args.rest_ports:
        status, data = call(port, "GET", "/cluster", timeout=2)
        if status == 200:
            return {m["name"]: m for m in json.loads(data)["members"]}
    return {}


def role_of(args, role):
    return next((name for name, m in members(args).items() if m["role"] == role and m.get("state") == "running"), None)


def healthy(args):
    """A running leader and two running replicas on its timeline, one synchronous, none lagging unknown."""
    found = members(args)
    leader = next((m for m in found.values() if m["role"] == "leader" and m.get("state") == "running"), None)
    if not leader or len(found) != 3:
        return False
    replicas = [m for m in found.values() if m["role"] in ("replica", "sync_standby")]
    return len(replicas) == 2 and all(m.get("state") == "running" and m.get("timeline") == leader.get("timeline")
                                      and isinstance(m.get("lag"), int) for m in replicas) \
        and any(m["role"] == "sync_standby" for m in replicas)


def back_as_replica(args, name):
    """NAME's own Patroni answers as a running replica, and the primary streams to it (a dead node's member key
    lingers in etcd for a TTL, so Patroni's /cluster alone could show it before it is back)."""
    leader = role_of(args, "leader")
    if leader in (None, name):
        return False
    status, data = call(args.rest_ports[int(name[2:]) - 1], "GET", "/patroni", timeout=2)
    if status != 200 or json.loads(data).get("role") != "replica" or json.loads(data).get("state") != "running":
        return False
    status, data = call(args.rest_ports[int(leader[2:]) - 1], "GET", "/patroni", timeout=2)
    return status == 200 and any(r.get("application_name") == name and r.get("state") == "streaming"
                                 for r in json.loads(data).get("replication", []))


def node_sql(args, name, sql):
    return psql(f"postgresql://quotevault@127.0.0.1:{args.pg_ports[name]}/postgres", sql)


class Phases:
    """One phase after another under the same load; per phase: requests, 503s, 500s, other failures, and how long
    after the fault the last failure came (the time to recover)."""

    def __init__(self, load):
        self.load, self.rows, self.ok = load, [], True

    def run(self, name, action, settle=3.0):
        fault_at = time.monotonic() - self.load.started
        detail, ok = action()
        time.sleep(settle)
        end_at = time.monotonic() - self.load.started
        with self.load.lock:
            window = [(t, kind, status) for t, kind, status in self.load.log if fault_at <= t <= end_at]
        failed = [(t, kind, status) for t, kind, status in window if not 200 <= status < 300]
        count = lambda code: sum(1 for _, _, status in failed if status == code)
        last = max((t for t, _, _ in failed), default=fault_at)
        row = {"phase": name, "from": fault_at, "to": end_at, "requests": len(window), "503": count(503),
               "500": count(500),
               "other": len(failed) - count(503) - count(500), "recovered": last - fault_at, "detail": detail}
        kinds = {}
        for _, kind, status in failed:
            kinds[f"{kind}:{status}"] = kinds.get(f"{kind}:{status}", 0) + 1
        ok = ok and row["500"] == 0 and row["other"] == 0 and not any(MALFORMED in kind for _, kind, _ in failed)
        self.ok = self.ok and ok
        print(f"  {name}: {row['requests']} requests, 503: {row['503']}, 500: {row['500']}, other failures: "
              f"{row['other']} {kinds or ''}; last failure {row['recovered']:.1f} s after the fault; {detail}"
              f"  {'PASS' if ok else 'FAIL'}", flush=True)
        self.rows.append(row)


    def acknowledgements(self):
        """Per phase, once the load has stopped: favorite writes acknowledged, found in the database, lost, and the
        longest pause between acknowledgements (any writer's) across the phase."""
        load = self.load
        stored = {user: set(psql(load.args.write_url, f"SELECT quote_id FROM user_favorites WHERE user_id = '{user}'")
                            .split()) for user in load.acknowledged}
        moments = sorted(t for t, _, _ in load.acks)
        for row in self.rows:
            inside = [(user, quote) for t, user, quote in load.acks if row["from"] <= t <= row["to"]]
            lost = sum(1 for user, quote in inside if quote not in stored[user])
            pause = max((b - a for a, b in zip(moments, moments[1:]) if b > row["from"] and a < row["to"]),
                        default=0.0)
            print(f"  {row['phase']}: writes acknowledged {len(inside)}, present {len(inside) - lost}, lost {lost}; "
                  f"longest pause between acknowledgements {pause:.1f} s", flush=True)
            self.ok = self.ok and lost == 0


def kill_primary(args):
    """SIGKILL the primary's Patroni and PostgreSQL; seconds until another node leads and until the killed one is
    back as a streaming replica of it, on its own (its supervisor restarts Patroni, which rewinds it)."""
    def action():
        killed = cluster_out("kill", "primary")
        rejoined_now = lambda: back_as_replica(args, killed) and healthy(args)
        promoted = wait_for(lambda: role_of(args, "leader") not in (None, killed), 60, step=0.2)
        rejoined = wait_for(lambda: rejoined_now(), 90, step=0.5)
        rejoined = None if rejoined is None else rejoined + (promoted or 0)  # from the kill, not the promotion
        new = role_of(args, "leader")
        ok = promoted is not None and rejoined is not None and rejoined <= 60
        return (f"killed {killed}; {new} primary after {promoted or -1:.1f} s; {killed} rejoined as a replica "
                f"{rejoined if rejoined is not None else -1:.1f} s after the kill"
                + (" (over 60 s)" if rejoined is not None and rejoined > 60 else ""), ok)
    return action


def stop_sync(args, seconds):
    def action():
        stopped = cluster_out("stop", "sync")
        took_over = wait_for(lambda: role_of(args, "sync_standby") not in (None, stopped), 30, step=0.2)
        time.sleep(max(0.0, seconds - (took_over or 0)))
        cluster_out("start", stopped)
        back = wait_for(lambda: healthy(args), 60, step=0.5)
        return (f"stopped {stopped} (the synchronous standby) for {seconds:.0f} s; "
                f"{role_of(args, 'sync_standby')} synchronous {took_over or -1:.1f} s after the stop; "
                f"{stopped} streaming again {back or -1:.1f} s after its start",
                back is not None and took_over is not None)
    return action


def replica_lag(args, hold):
    """Replay stopped on the asynchronous replica (SIGSTOP of its startup process: WAL still arrives, none is
    applied; Patroni itself resumes a replay paused by pg_wal_replay_pause()) and the primary's WAL moved to a new
    segment: HAProxy's read port must drop it (/replica?lag=...) while reads go on elsewhere; replay resumed
    (SIGCONT), it comes back."""
    def action():
        lagging = role_of(args, "replica")
        startup = int(node_sql(args, lagging, "SELECT pid FROM pg_stat_activity WHERE backend_type = 'startup'"))
        os.kill(startup, signal.SIGSTOP)
        try:
            def behind():
                psql(args.write_url, "SELECT pg_switch_wal()")
                return haproxy_state(lagging, "db_replicas") != "UP"
            dropped = wait_for(behind, 20, step=0.5)
            time.sleep(hold)
        finally:
            os.kill(startup, signal.SIGCONT)
        back = wait_for(lambda: haproxy_state(lagging, "db_replicas") == "UP", 30, step=0.1)
        return (f"{lagging} replay stopped {hold:.0f} s: left the read port after {dropped or -1:.1f} s, back "
                f"{back or -1:.1f} s after replay resumed", dropped is not None and back is not None)
    return action


def switchover(args):
    def action():
        old, started = role_of(args, "leader"), time.monotonic()
        cluster_out("switchover")
        new = wait_for(lambda: role_of(args, "leader") not in (None, old), 60, step=0.2)
        new = None if new is None else time.monotonic() - started
        back = wait_for(lambda: healthy(args), 60, step=0.5)
        back = None if back is None else time.monotonic() - started
        return (f"{old} -> {role_of(args, 'leader')} after {new or -1:.1f} s; {old} a replica again after "
                f"{back or -1:.1f} s", new is not None and back is not None)
    return action


def rolling_restart(args):
    def action():
        for n in range(1, len(args.instances) + 1):
            cluster("instance", "stop", n)
            cluster("instance", "start", n)
            wait_for(lambda: haproxy_state(f"s{n}") == "UP", 15)
        return f"instances 1..{len(args.instances)} restarted one by one (SIGTERM, drain, start)", True
    return action


def ha(args, quote_ids):
    load = Load(args, quote_ids, make_writers(args, args.writers, quote_ids, 7000), writer_pace=0.05).start()
    time.sleep(5)
    phases = Phases(load)
    print("ha: phases under one load (reads, favorite writes, logins through HAProxy):", flush=True)
    phases.run("SIGKILL primary", kill_primary(args))
    phases.run("SIGKILL the new primary", kill_primary(args))
    phases.run("synchronous standby stopped 15 s", stop_sync(args, 15))
    phases.run("replica lagging", replica_lag(args, 10))
    phases.run("switchover", switchover(args))
    phases.run("rolling restart of the instances", rolling_restart(args))
    load.stop()
    phases.acknowledgements()
    return summary("ha (all phases)", load, "; " + ", ".join(f"{r['phase']}: 503 {r['503']} / 500 {r['500']}"
                                                              for r in phases.rows), phases.ok)


def strict(args, quote_ids):
    """synchronous_mode_strict: both standbys stopped, writes answer 503 (nothing can be acknowledged without a
    standby) while reads go on; writes resume when one standby returns; nothing acknowledged is lost."""
    load = Load(args, quote_ids, make_writers(args, args.writers, quote_ids, 7000), writer_pace=0.05).start()
    time.sleep(5)
    first = cluster_out("stop", "sync")
    wait_for(lambda: role_of(args, "sync_standby") not in (None, first), 30, step=0.2)
    second = cluster_out("stop", "sync")
    stopped_at = time.monotonic() - load.started
    time.sleep(args.strict_seconds)
    cluster_out("start", first)
    started_at = time.monotonic() - load.started

    def writes_ok_since(t):
        with load.lock:
            return any(kind == "write" and 200 <= status < 300 for when, kind, status in load.log if when > t)

    resumed = wait_for(lambda: writes_ok_since(started_at), 60, step=0.1)
    cluster_out("start", second)
    wait_for(lambda: healthy(args), 60, step=0.5)
    time.sleep(2)
    load.stop()
    with load.lock:
        during = [(kind, status) for t, kind, status in load.log if stopped_at + 1 <= t <= started_at]
    tally = lambda kind: {s: sum(1 for k, x in during if k.startswith(kind) and x == s)
                          for s in sorted({x for k, x in during if k.startswith(kind)})}
    writes, reads = tally("write"), tally("read")
    # Writes in flight while no standby ran (sent before the first started again, answered after both stopped).
    sent = [(a, b, status) for a, b, status in load.write_spans if a <= started_at and b >= stopped_at]
    acknowledged_alone = sum(n for s, n in writes.items() if 200 <= s < 300)
    held = sum(1 for a, b, status in sent if 200 <= status < 300 and b >= started_at)
    longest = max((b - a for a, b, _ in sent), default=0)
    ok = acknowledged_alone == 0 and set(reads) <= set(range(200, 300)) and bool(reads) and resumed is not None \
        and 500 not in writes and all(status != 500 for _, _, status in sent)
    return summary("strict (both standbys stopped)", load,
                   f"; {args.strict_seconds:.0f} s with {first} and {second} stopped: answers in that time: writes by "
                   f"status {writes}, reads by status {reads}; {len(sent)} writes in flight then: "
                   f"{held} acknowledged only after {first} was back, the rest answered "
                   f"{sorted(status for a, b, status in sent if not (200 <= status < 300 and b >= started_at))}, "
                   f"longest wait {longest:.1f} s; writes acknowledged again {resumed or -1:.1f} s after {first} was "
                   f"started", ok)


def steady_load(args, quote_ids):
    """`scripts/cluster load SECONDS`: the load alone, a line every 5 s."""
    load = Load(args, quote_ids, make_writers(args, args.writers, quote_ids, 7000), writer_pace=0.05).start()
    seen = 0
    for _ in range(int(args.seconds // 5)):
        time.sleep(5)
        with load.lock:
            fresh, seen = load.log[seen:], len(load.log)
        statuses = {}
        for _, kind, status in fresh:
            statuses[f"{kind}:{status}"] = statuses.get(f"{kind}:{status}", 0) + 1
        print(f"  {time.monotonic() - load.started:5.0f} s: {statuses}", flush=True)
    load.stop()
    return summary("load", load, "", True)

def cluster_env():
    """Ports and URLs from `scripts/cluster env` (NAME=value words)."""
    words = subprocess.run([CLUSTER, "env"], capture_output=True, text=True, check=True).stdout.split()
    return dict(word.split("=", 1) for word in words if "=" in word)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("scenarios", nargs="+")
    parser.add_argument("--port", type=int, required=True, help="HAProxy")
    parser.add_argument("--instances", type=lambda s: [int(p) for p in s.split(",")], required=True)
    parser.add_argument("--write-url", required=True)
    parser.add_argument("--quote-ids", help="a file of quote ids, one a line (default: read from the database)")
    parser.add_argument("--max-seconds", type=float, default=600)
    parser.add_argument("--writers", type=int, default=3)
    parser.add_argument("--strict-seconds", type=float, default=15)
    parser.add_argument("--seconds", type=float, default=60, help="for the scenario load")
    args = parser.parse_args()
    env = cluster_env()
    args.rest_ports = [int(env["REST_PORT"]) + i for i in range(3)]
    args.pg_ports = {f"pg{i + 1}": int(env["PG_PORT"]) + i for i in range(3)}
    if args.quote_ids:
        quote_ids = [line.strip() for line in open(args.quote_ids) if line.strip()]
    else:
        quote_ids = psql(args.write_url, "SELECT id FROM quotes ORDER BY random()").split()
    runs = {"same-answers": lambda: same_answers(args, quote_ids), "sessions": lambda: sessions(args),
            "reset": lambda: reset(args),
            "rolling": lambda: rolling(args, quote_ids), "kill": lambda: kill(args, quote_ids),
            "ha": lambda: ha(args, quote_ids), "strict": lambda: strict(args, quote_ids),
            "load": lambda: steady_load(args, quote_ids)}
    results = [runs[name]() for name in args.scenarios]
    raise SystemExit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
