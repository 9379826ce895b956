#!/usr/bin/env python3
"""The HTTP side of .ci/compose-smoke, against a published port on loopback; every request has a timeout and
every loop a bound in count and time.

  api URL STATE ANON_KEY    a page of quotes, a search, a sign-up (saved in STATE), a favorite, /rest/v1 with
                            the anon key
  again URL STATE           after down/up: the saved user logs in and still has the favorite
  writes URL --ready R --stop S --marks M
                            collection adds from several workers until S exists, while the shell injects the
                            faults it lists in M; writes must resume after each, and every acknowledged add must
                            be in its collection afterwards
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid


def call(base, method, path, body=None, token=None, headers=None, timeout=5):
    """(status, decoded JSON or None); a connection that fails is status 0."""
    request = urllib.request.Request(base + path, method=method)
    request.add_header("Accept", "application/json")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, data, timeout=timeout) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    except (OSError, urllib.error.URLError):
        return 0, None
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        return status, None


def expect(what, status, wanted, document=None):
    if status not in wanted:
        sys.exit(f"compose_checks: {what}: HTTP {status}, expected {sorted(wanted)}: {document}")
    print(f"   {what}: {status}")


def quote_ids(base, count):
    ids, page = [], 1
    while len(ids) < count and page <= 100:
        status, document = call(base, "GET", f"/v1/quotes?page_size=100&page={page}")
        if status != 200:
            sys.exit(f"compose_checks: quotes page {page}: HTTP {status}")
        ids += [item["id"] for item in document["items"]]
        if not document.get("has_more"):
            break
        page += 1
    return ids[:count]


def api(args):
    status, document = call(args.url, "GET", "/v1/quotes?page_size=5")
    expect("a page of quotes", status, {200}, document)
    if not document["items"]:
        sys.exit("compose_checks: no quotes (was the corpus seeded?)")
    quote = document["items"][0]["id"]
    status, document = call(args.url, "GET", "/v1/quotes/search?q=life&page_size=5")
    expect("a search", status, {200}, document)
    if document["total"] < 1 or "life" not in document["items"][0]["text"].lower():
        sys.exit(f"compose_checks: the search for 'life' found {document['total']}")
    email, password = f"smoke-{uuid.uuid4().hex[:12]}@example.com", uuid.uuid4().hex
    status, session = call(args.url, "POST", "/v1/auth/signup", {"email": email, "password": password})
    expect("a sign-up", status, {201}, session)
    token = session["access_token"]
    status, document = call(args.url, "PUT", f"/v1/favorites/{quote}", token=token)
    expect("a favorite", status, {201}, document)
    status, document = call(args.url, "GET", "/v1/favorites/ids", token=token)
    if quote not in (document or {}).get("ids", []):
        sys.exit(f"compose_checks: the favorite is not listed: {status} {document}")
    status, rows = call(args.url, "GET", "/rest/v1/quotes?select=id,text&limit=3", headers={"apikey": args.anon_key})
    expect("/rest/v1/quotes with the anon key", status, {200}, rows)
    if not isinstance(rows, list) or len(rows) != 3:
        sys.exit(f"compose_checks: /rest/v1/quotes answered {rows}")
    with open(args.state, "w") as file:
        json.dump({"email": email, "password": password, "favorite": quote}, file)


def login(base, state):
    status, session = call(base, "POST", "/v1/auth/login", {"email": state["email"], "password": state["password"]})
    expect("the saved user logs in", status, {200}, session)
    return session["access_token"]


def again(args):
    state = json.load(open(args.state))
    token = login(args.url, state)
    status, document = call(args.url, "GET", "/v1/favorites/ids", token=token)
    if state["favorite"] not in (document or {}).get("ids", []):
        sys.exit(f"compose_checks: the favorite is gone after down/up: {status} {document}")
    print("   the favorite is still there")


def collection_quotes(base, token, collection):
    present, page = set(), 1
    while page <= 20:
        for _ in range(30):
            status, document = call(base, "GET", f"/v1/collections/{collection}/quotes?page_size=100&page={page}",
                                    token=token)
            if status == 200:
                break
            time.sleep(1)
        else:
            sys.exit(f"compose_checks: reading collection {collection}: HTTP {status}")
        present |= {item["quote"]["id"] for item in document["items"]}
        if not document.get("has_more"):
            return present
        page += 1
    return present


def read_marks(path):
    """The faults the shell recorded: [(wall-clock time, what)], in order."""
    try:
        lines = open(path).read().splitlines()
    except FileNotFoundError:
        return []
    return sorted((float(line.split(" ", 1)[0]), line.split(" ", 1)[1]) for line in lines if " " in line)


def writes(args):
    """Writers run until STOP exists (or --duration); the shell injects faults meanwhile and records each in MARKS
    ("TIME WHAT" lines, TIME from `date +%s.%N`). Per fault: acknowledgements until the next one, the longest
    pause between acknowledgements in that span; at the end every acknowledged add is read back."""
    email, password = f"faults-{uuid.uuid4().hex[:12]}@example.com", uuid.uuid4().hex
    status, session = call(args.url, "POST", "/v1/auth/signup", {"email": email, "password": password})
    expect("the writer's sign-up", status, {201}, session)
    token = session["access_token"]
    quotes = quote_ids(args.url, 1000)  # the quota of quotes per collection
    # Each worker fills its own collections, one after another: (collection, quote) pairs, each added once.
    plans = []
    for worker in range(args.workers):
        plan = []
        for number in range(args.collections):
            status, document = call(args.url, "POST", "/v1/collections", {"name": f"faults {worker}.{number}"},
                                    token=token)
            if status != 201:
                sys.exit(f"compose_checks: collection {worker}.{number}: HTTP {status}: {document}")
            plan += [(document["id"], quote) for quote in quotes]
        plans.append(plan)
    print(f"   {args.workers * args.collections} collections: 201")
    acknowledged = [[] for _ in plans]
    failures = [0] * len(plans)
    deadline = time.monotonic() + args.duration
    stop = threading.Event()

    def work(worker):
        for collection, quote in plans[worker]:
            while not stop.is_set() and time.monotonic() < deadline:
                status, _ = call(args.url, "PUT", f"/v1/collections/{collection}/quotes/{quote}", token=token)
                if status in (200, 201):
                    acknowledged[worker].append((collection, quote, time.time()))
                    break
                failures[worker] += 1
                time.sleep(0.2)
            else:
                return

    threads = [threading.Thread(target=work, args=(worker,)) for worker in range(args.workers)]
    for thread in threads:
        thread.start()
    open(args.ready, "w").close()
    while time.monotonic() < deadline and not os.path.exists(args.stop):
        time.sleep(0.2)
    stop.set()
    ended = time.time()
    for thread in threads:
        thread.join(30)
    moments = sorted(moment for acks in acknowledged for _, _, moment in acks)
    marks = read_marks(args.marks)
    resumed_every_time = bool(marks)
    for index, (fault_at, what) in enumerate(marks):
        until = marks[index + 1][0] if index + 1 < len(marks) else ended
        after = [moment for moment in moments if fault_at <= moment < until]
        # Gaps between consecutive acknowledgements that overlap this fault's span (the one across the fault too).
        pause = max((b - a for a, b in zip(moments, moments[1:]) if b > fault_at and a < until), default=None)
        print(f"   {what}: acknowledged in the {until - fault_at:.0f} s after it {len(after)}; longest pause "
              f"between acknowledgements {pause and round(pause, 1)} s")
        resumed_every_time = resumed_every_time and bool(after)
    stored = {}
    for acks in acknowledged:
        for collection, _, _ in acks:
            if collection not in stored:
                stored[collection] = collection_quotes(args.url, token, collection)
    acked = sum(map(len, acknowledged))
    lost = sum(1 for acks in acknowledged for collection, quote, _ in acks if quote not in stored[collection])
    print(f"   acknowledged {acked}, present {acked - lost}, lost {lost}; failed attempts {sum(failures)}; "
          f"faults {len(marks)}")
    if lost or not resumed_every_time:
        sys.exit("compose_checks: acknowledged writes were lost, or writes did not resume after a fault")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    command = commands.add_parser("api")
    command.add_argument("url")
    command.add_argument("state")
    command.add_argument("anon_key")
    command.set_defaults(run=api)
    command = commands.add_parser("again")
    command.add_argument("url")
    command.add_argument("state")
    command.set_defaults(run=again)
    command = commands.add_parser("writes")
    command.add_argument("url")
    command.add_argument("--workers", type=int, default=4)
    command.add_argument("--collections", type=int, default=10, help="per worker, each up to its 1,000 quotes")
    command.add_argument("--duration", type=float, default=300, help="at most, in seconds")
    command.add_argument("--ready", required=True, help="created once the writers run")
    command.add_argument("--stop", required=True, help="the writers stop once this exists")
    command.add_argument("--marks", required=True, help="the faults, a line each: TIME WHAT")
    command.set_defaults(run=writes)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
