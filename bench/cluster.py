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
  replica        the standby stopped: reads go on from the primary, then return to it; a write waits for it
  failover       the primary stopped, the standby promoted: time until writes succeed again; the old primary
                 rejoins as a standby
After each load scenario every acknowledged favorite write is looked up in the database (count, lost).
"""
import argparse
import http.client
import json
import os
import random
import re
import subprocess
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLUSTER = os.path.join(ROOT, "scripts", "cluster")
PASSWORD = "cluster proof password 1"
NEW_PASSWORD = "cluster proof password 2"


def call(port, method, path, body=None, token=None, timeout=10):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        response = connection.getresponse()
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


def haproxy_state(server):
    out = subprocess.run([CLUSTER, "haproxy", "show stat"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        fields = line.split(",")
        if len(fields) > 17 and fields[0] == "quote_servers" and fields[1] == server:
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


def replica_reads(ports):
    """Reads served by replicas and by the primary, summed over the instances' /metrics."""
    totals = {"replica": 0, "primary": 0}
    for port in ports:
        status, data = call(port, "GET", "/metrics")
        for line in data.decode().splitlines():
            if line.startswith("db_reads_served{"):
                served = line.split('served_by="')[1].split('"')[0]
                totals[served] += int(float(line.rsplit(" ", 1)[1]))
    return totals


class Load:
    """Steady mixed traffic through HAProxy: reads (pages, a quote, search, quote of the day), logins and favorite
    writes, each worker paced; records every answer and every acknowledged write."""

    def __init__(self, args, quote_ids, writers, readers=6, logins=1, pace=0.02):
        self.args, self.quote_ids, self.pace = args, quote_ids, pace
        self.lock = threading.Lock()
        self.stop_flag = threading.Event()
        self.log = []  # (seconds since start, kind, status)
        self.acknowledged = {}  # user id -> set of quote ids
        self.writers = writers
        self.threads = [threading.Thread(target=self.reader, args=(i,)) for i in range(readers)]
        self.threads += [threading.Thread(target=self.writer, args=(w,)) for w in writers]
        self.threads += [threading.Thread(target=self.login) for _ in range(logins if writers else 0)]
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
                path = f"/v1/quotes?limit=20&page={rng.randint(1, 50)}"
            elif choice < 0.7:
                path = f"/v1/quotes/{rng.choice(self.quote_ids)}"
            elif choice < 0.85:
                path = "/v1/quotes/search?q=" + rng.choice(["life", "love", "time", "people", "world"])
            else:
                path = f"/v1/qotd?date=2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
            status, _ = call(self.args.port, "GET", path)
            self.record("read", status)
            time.sleep(self.pace)

    def writer(self, user):
        deadline = self.started + self.args.max_seconds
        for quote in user["quotes"]:
            if self.stop_flag.is_set() or time.monotonic() > deadline:
                return
            status, _ = call(self.args.port, "PUT", f"/v1/favorites/{quote}", token=user["token"], timeout=35)
            self.record("write", status)
            if 200 <= status < 300:
                with self.lock:
                    self.acknowledged.setdefault(user["id"], set()).add(quote)
            time.sleep(self.pace)

    def login(self):
        deadline = self.started + self.args.max_seconds
        user = self.writers[0]
        while not self.stop_flag.is_set() and time.monotonic() < deadline:
            status, _ = call(self.args.port, "POST", "/v1/auth/login", {"email": user["email"], "password": PASSWORD})
            self.record("login", status)
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
    ok = ok and lost == 0
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


def replica(args, quote_ids):
    # Signing up writes, and writes wait for the synchronous standby: the user for the write below comes first.
    writer = make_writers(args, 1, quote_ids, 1)[0]
    load = Load(args, quote_ids, []).start()
    time.sleep(3)
    before = replica_reads(args.instances)
    time.sleep(3)
    during_start = replica_reads(args.instances)
    share = (during_start["replica"] - before["replica"]) / max(1, sum(during_start.values()) - sum(before.values()))
    cluster("pg", "stop", "standby")
    stopped_at = time.monotonic()
    time.sleep(2)
    mark = replica_reads(args.instances)
    # A write now waits for the synchronous standby: it is acknowledged only once the standby has it.
    result = {}

    def write():
        started = time.monotonic()
        result["status"] = call(args.port, "PUT", f"/v1/favorites/{writer['quotes'][0]}", token=writer["token"], timeout=35)[0]
        result["seconds"] = time.monotonic() - started

    thread = threading.Thread(target=write)
    thread.start()
    time.sleep(3)
    during = replica_reads(args.instances)
    cluster("pg", "start", "standby")
    restarted_at = time.monotonic()
    back = wait_for(lambda: replica_reads(args.instances)["replica"] > during["replica"], 30, step=0.2)
    thread.join(timeout=40)
    load.stop()
    stored = psql(args.write_url, f"SELECT count(*) FROM user_favorites WHERE user_id = '{writer['id']}'")
    ok = during["replica"] == mark["replica"] and during["primary"] > mark["primary"] and back is not None \
        and result.get("status") == 201 and stored == "1"
    return summary("standby stopped for ~5 s", load,
                   f"; replica share of reads before {share:.0%}; while stopped: replica reads +{during['replica'] - mark['replica']}, "
                   f"primary reads +{during['primary'] - mark['primary']}; replica back in use {back:.1f} s after its restart"
                   f" (standby down {restarted_at - stopped_at:.1f} s); a write sent while it was down: {result.get('status')} "
                   f"after {result.get('seconds', 0):.1f} s (waited for the synchronous standby), stored: {stored}"
                   if back is not None else "; replica never came back", ok)


def failover(args, quote_ids):
    load = Load(args, quote_ids, make_writers(args, 2, quote_ids, 2000)).start()
    time.sleep(3)
    acknowledged_before, _ = (sum(map(len, load.acknowledged.values())), 0)
    stopped_at = time.monotonic() - load.started
    cluster("pg", "stop", "primary")
    time.sleep(args.promote_after)
    cluster("pg", "promote", "standby")
    promoted_at = time.monotonic() - load.started

    def writes_ok_since(t):
        with load.lock:
            return any(kind == "write" and 200 <= status < 300 for when, kind, status in load.log if when > t)

    resumed = wait_for(lambda: writes_ok_since(promoted_at), 30, step=0.05)
    time.sleep(3)
    load.stop()
    failed = load.failures(since=stopped_at)
    last_failure = max((t for t, _, _ in failed), default=stopped_at)
    # The old primary rejoins as a standby of the new one: pg_rewind, then streaming.
    rejoin_started = time.monotonic()
    rejoined = subprocess.run([CLUSTER, "pg", "rejoin", "primary"], capture_output=True, text=True)
    rejoin = time.monotonic() - rejoin_started if rejoined.returncode == 0 else None
    return summary("failover (primary stopped, standby promoted)", load,
                   f"; acknowledged before the stop {acknowledged_before}; promoted {args.promote_after:.1f} s after the stop; "
                   f"first acknowledged write {resumed:.2f} s after the promotion; failed requests between stop and "
                   f"{last_failure - stopped_at:.1f} s after it: {len(failed)}; old primary rejoined as standby in "
                   f"{rejoin:.1f} s" if resumed is not None and rejoin is not None
                   else f"; writes resumed: {resumed}, rejoin: {rejoined.stderr[-300:]}",
                   resumed is not None and rejoin is not None)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("scenarios", nargs="+")
    parser.add_argument("--port", type=int, required=True, help="HAProxy")
    parser.add_argument("--instances", type=lambda s: [int(p) for p in s.split(",")], required=True)
    parser.add_argument("--write-url", required=True)
    parser.add_argument("--quote-ids", required=True)
    parser.add_argument("--max-seconds", type=float, default=90)
    parser.add_argument("--promote-after", type=float, default=1.0)
    args = parser.parse_args()
    quote_ids = [line.strip() for line in open(args.quote_ids) if line.strip()]
    runs = {"same-answers": lambda: same_answers(args, quote_ids), "sessions": lambda: sessions(args),
            "reset": lambda: reset(args),
            "rolling": lambda: rolling(args, quote_ids), "kill": lambda: kill(args, quote_ids),
            "replica": lambda: replica(args, quote_ids), "failover": lambda: failover(args, quote_ids)}
    results = [runs[name]() for name in args.scenarios]
    raise SystemExit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
