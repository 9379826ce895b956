"""Client side of bench/sync.sh: a full first sync, batches of 500 queued operations, the same 500 as single
requests. Talks only to 127.0.0.1; every loop is bounded by its round count.

usage: sync.py PORT TOKEN full ROUNDS
       sync.py PORT TOKEN batch ROUNDS QUOTE_ID...   (250 quote ids: each batch adds and removes them)
"""
import http.client
import json
import statistics
import sys
import time
import uuid

port, token, mode, rounds = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)


def request(method, path, body=None):
    connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
    response = connection.getresponse()
    data = response.read()
    if response.status >= 300 and not (method == "DELETE" and response.status == 204):
        raise SystemExit(f"{method} {path}: {response.status} {data[:200]!r}")
    return data


def full_sync():
    pages = changes = size = 0
    since = None
    while pages < 10_000:
        data = request("GET", "/v1/sync?limit=1000" + (f"&since={since}" if since else ""))
        body = json.loads(data)
        pages, changes, size = pages + 1, changes + len(body["changes"]), size + len(data)
        since = body["next"]
        if not body["has_more"]:
            break
    return pages, changes, size


def ms(seconds):
    return f"{seconds * 1000:.1f} ms"


if mode == "full":
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        pages, changes, size = full_sync()
        times.append(time.perf_counter() - started)
    print(f"full first sync: {changes} changes in {pages} pages of 1000, {size / 1e6:.2f} MB; "
          f"median {ms(statistics.median(times))} (min {ms(min(times))}, max {ms(max(times))}, {rounds} rounds)")
elif mode == "batch":
    quotes = sys.argv[5:]
    batch_times, replay_times, single_times = [], [], []
    for _ in range(rounds):
        operations = [{"id": str(uuid.uuid4()), "op": "favorite.add", "quote_id": q} for q in quotes]
        operations += [{"id": str(uuid.uuid4()), "op": "favorite.remove", "quote_id": q} for q in quotes]
        started = time.perf_counter()
        results = json.loads(request("POST", "/v1/sync", {"operations": operations}))["results"]
        batch_times.append(time.perf_counter() - started)
        assert len(results) == 500 and all(r["status"] in (201, 204) for r in results), results[:3]
        started = time.perf_counter()
        request("POST", "/v1/sync", {"operations": operations})
        replay_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        for q in quotes:
            request("PUT", f"/v1/favorites/{q}")
        for q in quotes:
            request("DELETE", f"/v1/favorites/{q}")
        single_times.append(time.perf_counter() - started)
    batch, replay, single = (statistics.median(t) for t in (batch_times, replay_times, single_times))
    print(f"POST /v1/sync, 500 operations:          median {ms(batch)} ({batch / 500 * 1e6:.0f} µs an operation), {rounds} rounds")
    print(f"the same batch again (all remembered):  median {ms(replay)}")
    print(f"the same 500 as single /v1 requests:    median {ms(single)} on one keep-alive connection "
          f"(batch = {100 * batch / single:.0f}% of that)")
