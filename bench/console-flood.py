#!/usr/bin/env python3
"""Console sign-in floods beside legitimate traffic, for bench/console-flood.sh.

Usage: console-flood.py PORT DATABASE_URL SECONDS [ATTACK ...]
The server runs with RATE_LIMITS=on and TRUSTED_PROXIES=127.0.0.2. Legitimate clients: one owner on 127.0.0.1
who signs in with a fresh one-time link and browses console pages (overview, quotes, a quote search, the quote of
the day calendar, audit, accounts), in turn; and app clients on 127.0.0.10-13 using /v1 (pages, a category, a
search, a favorite added and removed). Attacks on POST /console/sign-in (phases of SECONDS each, the first
without any):
  rotating   bad links (well-formed, unknown) through the trusted proxy 127.0.0.2, each request naming a new
             client in X-Forwarded-For (a botnet: every address gets its own 20 failures)
  pinned     bad links from 4 addresses (127.0.0.3-6) that are past their limit at once (429s)
  codes      wrong TOTP codes on a good link of another owner (enrolled), new X-Forwarded-For each time: the
             per-owner limit (10) refuses
Every loop is bounded by the phase's time and by MAX_REQUESTS; a fixed number of threads. Loopback only.
Prints, per phase, the legitimate clients' p50/p99 and status counts (owner sign-ins, owner pages, app) and what
the attack got.
"""
import base64
import hashlib
import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter

HOST = "127.0.0.1"
PASSWORD = "correct horse battery"
MAX_REQUESTS = 200_000  # per attack thread and phase, beside the phase's time
CONSOLE_PAGES = ["/console", "/console/quotes", "/console/quotes?q=love", "/console/qotd", "/console/audit",
                 "/console/accounts"]


def connection(source="127.0.0.1", timeout=15.0):
    return http.client.HTTPConnection(HOST, PORT, timeout=timeout, source_address=(source, 0))


def call(conn, method, path, body=None, headers=None):
    """One request on a keep-alive connection: (status, headers, body); status 0 when the connection failed."""
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.getheaders(), response.read()
    except (OSError, http.client.HTTPException):
        conn.close()
        return 0, [], b""


def form(fields):
    return "&".join(f"{key}={value}" for key, value in fields.items()).encode()


FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def psql(sql):
    return subprocess.run(["psql", "-XAtq", DATABASE_URL, "-c", sql], capture_output=True, text=True,
                          timeout=60, check=True).stdout.strip()


def new_token():
    return base64.urlsafe_b64encode(os.urandom(32)).decode().rstrip("=")


def links(email, count):
    """`count` one-time sign-in links for the owner `email`, stored as `quote-server owner add` stores them (the
    SHA-256 of the token); the owner itself was added with the command."""
    tokens = [new_token() for _ in range(count)]
    values = ",".join(f"('{hashlib.sha256(t.encode()).hexdigest()}')" for t in tokens)
    psql(f"INSERT INTO console_sign_in_tokens (token_hash, owner_id, expires_at) "
         f"SELECT v.h, o.id, now() + interval '15 minutes' FROM (VALUES {values}) AS v(h), console_owners o "
         f"WHERE lower(o.email) = lower('{email}')")
    return tokens


def session(email, source):
    conn = connection(source)
    for route in ("signup", "login"):
        status, _, body = call(conn, "POST", f"/v1/auth/{route}", json.dumps({"email": email, "password": PASSWORD})
                               .encode(), {"Content-Type": "application/json"})
        if status in (200, 201):
            return json.loads(body)["access_token"]
    raise SystemExit(f"no session for {email}")


# ---- the legitimate clients -------------------------------------------------------------------------------------

def owner_client(stop, samples, tokens):
    """Signs in with a fresh link, browses every console page once, again and again until `stop`."""
    conn = connection()
    while not stop.is_set() and tokens:
        started = time.perf_counter()
        status, headers, _ = call(conn, "POST", "/console/sign-in", form({"token": tokens.pop()}), FORM)
        samples.append(("owner sign-in", status, time.perf_counter() - started))
        cookie = next((v.split(";")[0] for k, v in headers if k.lower() == "set-cookie"), None)
        if status != 303 or cookie is None:
            conn = connection()
            stop.wait(0.2)
            continue
        for page in CONSOLE_PAGES:
            if stop.is_set():
                break
            started = time.perf_counter()
            status, _, _ = call(conn, "GET", page, headers={"Cookie": cookie})
            samples.append(("owner pages", status, time.perf_counter() - started))
            if status == 0:
                conn = connection()


def app_client(stop, samples, index, token, quote_ids):
    """/v1 in turn: pages, a category, a search, a favorite added and removed."""
    rng = random.Random(index)
    source = f"127.0.0.{10 + index}"
    conn = connection(source)
    auth = {"Authorization": f"Bearer {token}"}
    n = 0
    while not stop.is_set() and n < MAX_REQUESTS:
        n += 1
        kind = ("page", "search", "page", "write", "category", "page")[n % 6]
        method, headers = "GET", {}
        if kind == "page":
            path = f"/v1/quotes?page_size=20&page={rng.randint(1, 50)}"
        elif kind == "category":
            path = f"/v1/quotes?category={rng.choice(['wisdom', 'love', 'success', 'humor'])}&page_size=20"
        elif kind == "search":
            path = f"/v1/quotes/search?q={rng.choice(['life', 'love', 'time', 'world', 'people'])}"
        else:
            method = "PUT" if (n // 6) % 2 == 0 else "DELETE"
            path, headers = f"/v1/favorites/{quote_ids[(n // 12 + index) % len(quote_ids)]}", auth
        started = time.perf_counter()
        status, _, _ = call(conn, method, path, headers=headers)
        label = {"page": "app pages", "category": "app pages", "search": "app search", "write": "app favorites"}
        samples.append((label[kind], status, time.perf_counter() - started))
        if status == 0:
            conn = connection(source)


# ---- the attacks ------------------------------------------------------------------------------------------------

def attack_loop(stop, outcome, source, make):
    conn = connection(source)
    for _ in range(MAX_REQUESTS):
        if stop.is_set():
            return
        body, headers = make()
        status, _, _ = call(conn, "POST", "/console/sign-in", body, {**FORM, **headers})
        outcome[status] += 1
        if status == 0:
            conn = connection(source)
            stop.wait(0.05)


def next_address():
    """A client address nobody used before (documentation and private ranges, counted up)."""
    with ADDRESS_LOCK:
        ADDRESS[0] += 1
        n = ADDRESS[0]
    return f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"


def rotating():
    make = lambda: (form({"token": new_token()}), {"X-Forwarded-For": next_address()})
    return [("127.0.0.2", make)] * 16


def pinned():
    make = lambda: (form({"token": new_token()}), {})
    return [(f"127.0.0.{3 + a}", make) for a in range(4) for _ in range(4)]


def codes():
    link = VICTIM_LINK
    make = lambda: (form({"token": link, "code": f"{random.randint(0, 999999):06d}"}),
                    {"X-Forwarded-For": next_address()})
    return [("127.0.0.2", make)] * 16


ATTACKS = {"rotating": rotating, "pinned": pinned, "codes": codes}
ADDRESS, ADDRESS_LOCK = [0], threading.Lock()


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


KINDS = ("owner sign-in", "owner pages", "app pages", "app search", "app favorites")


def figures(samples, kind):
    """requests, p50 ms, p99 ms, {status: count} of one kind of legitimate request."""
    times = [elapsed * 1000 for k, _, elapsed in samples if k == kind]
    statuses = Counter(status for k, status, _ in samples if k == kind)
    if not times:
        return 0, "-", "-", {}
    p50, p99 = statistics.median(times), percentile(times, 0.99)
    return len(times), f"{p50:.1f}", f"{p99:.1f}", dict(sorted(statuses.items()))


def phase(name, seconds, app_tokens, quote_ids):
    stop, attack_stop = threading.Event(), threading.Event()
    samples, outcome, threads = [], Counter(), []
    if name != "alone":
        threads = [threading.Thread(target=attack_loop, args=(attack_stop, outcome, source, make))
                   for source, make in ATTACKS[name]()]
        for thread in threads:
            thread.start()
        time.sleep(2)  # the flood at full force before the measurement
    attacked_before = sum(outcome.values())
    tokens = links(OWNER, 400)
    workers = [threading.Thread(target=owner_client, args=(stop, samples, tokens))]
    workers += [threading.Thread(target=app_client, args=(stop, samples, i, app_tokens[i], quote_ids))
                for i in range(len(app_tokens))]
    started = time.monotonic()
    for worker in workers:
        worker.start()
    time.sleep(seconds)
    stop.set()
    for worker in workers:
        worker.join(timeout=30)
    attack_rate = (sum(outcome.values()) - attacked_before) / (time.monotonic() - started)
    attack_stop.set()
    for thread in threads:
        thread.join(timeout=30)
    return samples, (f"{attack_rate:.0f}/s, {dict(sorted(outcome.items()))}" if name != "alone" else "-")


def main():
    global PORT, DATABASE_URL, OWNER, VICTIM_LINK
    PORT, DATABASE_URL, seconds = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    names = sys.argv[4:] or list(ATTACKS)
    OWNER = "legit-owner@bench.local"
    # The victim owner has a second factor (a random secret stored directly; nobody knows its codes).
    psql("UPDATE console_owners SET totp_secret = decode(md5(random()::text) || left(md5(random()::text), 8), "
         "'hex') WHERE email = 'victim-owner@bench.local' AND totp_secret IS NULL")
    VICTIM_LINK = links("victim-owner@bench.local", 1)[0]
    status, _, body = call(connection(), "GET", "/v1/quotes?page_size=50")
    quote_ids = [quote["id"] for quote in json.loads(body)["items"]]
    app_tokens = [session(f"console-flood-app{i}@bench.local", f"127.0.0.{10 + i}") for i in range(4)]
    phase("alone", min(seconds, 3), app_tokens, quote_ids)  # warm-up, not reported
    phases = ["alone"] + names + ["alone"]
    results = [phase(name, seconds, app_tokens, quote_ids) for name in phases]
    print("| legitimate client | " + " | ".join(f"{n}: requests, p50 / p99 ms, statuses" for n in phases) + " |")
    print("|---" * (len(phases) + 1) + "|")
    for kind in KINDS:
        cells = []
        for samples, _ in results:
            count, p50, p99, statuses = figures(samples, kind)
            cells.append(f"{count}, {p50} / {p99}, {statuses}")
        print(f"| {kind} | " + " | ".join(cells) + " |")
    print("| attack (rate while measured, statuses) | " + " | ".join(a for _, a in results) + " |", flush=True)


if __name__ == "__main__":
    main()
