"""Realtime (/realtime/v1/websocket): what idle subscribers cost, how soon a committed write reaches its subscribers,
and what they cost the other routes.

One run, in order:
1. ROUNDS interleaved rounds of wrk on the routes in ROUTES: without subscribers, then with SUBSCRIBERS WebSockets
   (vsn 1.0.0) from ADDRESSES loopback addresses (127.0.0.2, .3, ...), each joined to one channel: USERS sockets
   signed in as distinct users on `user_favorites` filtered by their own `user_id`, FANOUT sockets with the anon key
   on `quotes` INSERT, the rest with the anon key on `quote_of_day`. These subscribers are held by
   bench/realtime-holder.c (HOLDER), a single-threaded C program, so that the client's own CPU is small and
   measured: each wrk run reports requests/s, the server's CPU time per request (/proc/PID/stat) and the holder's
   CPU. The first round also gives the server's VmRSS per subscriber and its CPU with the subscribers idle;
2. the same subscribers again, held by this script's asyncio client (which can time each arrival);
3. WRITES favorite writes (PUT then DELETE /v1/favorites/{id}, a user at a time): delay to the user's socket;
4. INSERTS quote inserts (POST /rest/v1/quotes with the service role key): delay to each of the FANOUT sockets.
Every socket sends a Phoenix heartbeat every 25 s (spread evenly), as supabase clients do. Every wait is bounded.

Usage: python3 bench/realtime.py PORT SERVER_PID ANON_KEY SERVICE_KEY TOKENS_FILE QUOTE_ID
Environment: SUBSCRIBERS (10000), USERS (1000, one socket each: as many lines in TOKENS_FILE), FANOUT (1000),
ADDRESSES (200), WRITES (300), INSERTS (20), DURATION (wrk seconds, 5), CONNECTIONS (wrk, 32), ROUTES, ROUNDS (5),
HOLDER (the built bench/realtime-holder.c), LATENCY (1: also run steps 2-4), PERF (a file: `perf record -g` of the
server during the first route's wrk in round PERF_ROUND (1) with subscribers), PERF_WITHOUT (the same, without).
"""

import asyncio
import base64
import json
import os
import re
import statistics
import subprocess
import sys
import time

from server_process import cpu_seconds, rss_kib
from websocket_frames import masked_frame

port, pid, anon, service, tokens_file, quote = sys.argv[1:7]
port, pid = int(port), int(pid)
tokens = [line.strip() for line in open(tokens_file) if line.strip()]
subscribers = int(os.environ.get("SUBSCRIBERS", "10000"))
users = min(int(os.environ.get("USERS", "1000")), len(tokens))
fanout = int(os.environ.get("FANOUT", "1000"))
addresses = int(os.environ.get("ADDRESSES", "200"))
writes = int(os.environ.get("WRITES", "300"))
inserts = int(os.environ.get("INSERTS", "20"))
duration = int(os.environ.get("DURATION", "5"))
connections = int(os.environ.get("CONNECTIONS", "32"))
routes = os.environ.get("ROUTES", "/v1/quotes?page=1 /v1/quotes/search?q=courage").split()
rounds = int(os.environ.get("ROUNDS", "5"))
holder_binary = os.environ.get("HOLDER", os.path.join(os.path.dirname(__file__), "out", "realtime-holder"))
latency = os.environ.get("LATENCY", "1") == "1"
perf_output = os.environ.get("PERF")
perf_round = int(os.environ.get("PERF_ROUND", "1"))
perf_without = os.environ.get("PERF_WITHOUT")
HEARTBEAT_SECONDS = 25
run = f"{time.time():.0f}"


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def summary(values):
    if not values:
        return "no samples"
    return (f"p50 {percentile(values, 0.5):.2f} ms, p99 {percentile(values, 0.99):.2f} ms, "
            f"max {max(values):.2f} ms, mean {statistics.fmean(values):.2f} ms ({len(values)} samples)")


def user_id(token):
    claims = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(claims + "=" * (-len(claims) % 4)))["sub"]


class Subscriber(asyncio.Protocol):
    """A minimal WebSocket client speaking Phoenix vsn 1.0.0: handshake, one join, heartbeats; notes when each
    `postgres_changes` message arrives."""

    def __init__(self, topic, join_payload):
        self.topic, self.join_payload = topic, join_payload
        self.transport = None
        self.buffer = bytearray()
        self.upgraded = False
        self.joined = asyncio.get_running_loop().create_future()
        self.changes = []  # (arrival monotonic time, payload bytes)
        self.changed = asyncio.Event()
        self.closed = False
        self.ref = 0

    def send(self, message):
        self.ref += 1
        message["ref"] = str(self.ref)
        if self.transport and not self.transport.is_closing():
            self.transport.write(masked_frame(json.dumps(message, separators=(",", ":")).encode()))

    def connection_made(self, transport):
        self.transport = transport
        key = base64.b64encode(os.urandom(16)).decode()
        transport.write(
            f"GET /realtime/v1/websocket?apikey={anon}&vsn=1.0.0 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            f"Sec-WebSocket-Version: 13\r\n\r\n".encode())

    def data_received(self, data):
        now = time.monotonic()
        self.buffer += data
        if not self.upgraded:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self.buffer[:end])
            del self.buffer[:end + 4]
            if not head.startswith(b"HTTP/1.1 101"):
                self.fail(head.split(b"\r\n")[0].decode(errors="replace"))
                return
            self.upgraded = True
            self.send({"topic": self.topic, "event": "phx_join", "payload": self.join_payload,
                       "join_ref": "1"})
        while len(self.buffer) >= 2:
            opcode, length, start = self.buffer[0] & 0x0F, self.buffer[1] & 0x7F, 2
            if length == 126:
                if len(self.buffer) < 4:
                    return
                length, start = int.from_bytes(self.buffer[2:4], "big"), 4
            elif length == 127:
                if len(self.buffer) < 10:
                    return
                length, start = int.from_bytes(self.buffer[2:10], "big"), 10
            if len(self.buffer) < start + length:
                return
            payload = bytes(self.buffer[start:start + length])
            del self.buffer[:start + length]
            if opcode == 0x8:
                self.fail(f"closed by the server: {payload[:2].hex()} {payload[2:].decode(errors='replace')}")
            elif opcode == 0x9:
                self.transport.write(masked_frame(payload, 0xA))
            elif opcode == 0x1:
                self.message(now, payload)

    def message(self, now, payload):
        if b'"event":"postgres_changes"' in payload:
            self.changes.append((now, payload))
            self.changed.set()
        elif not self.joined.done() and b'"event":"phx_reply"' in payload and self.topic.encode() in payload:
            if b'"status":"ok"' in payload:
                self.joined.set_result(True)
            else:
                self.fail("join refused: " + payload.decode(errors="replace")[:300])

    def fail(self, reason):
        if not self.joined.done():
            self.joined.set_exception(RuntimeError(reason))
        elif not self.closed:
            print(f"socket lost: {reason}", flush=True)
        self.closed = True
        if self.transport:
            self.transport.close()

    def connection_lost(self, exc):
        if not self.closed:
            self.fail(f"connection lost ({exc})")


async def subscribe(index, topic, join_payload):
    loop = asyncio.get_running_loop()
    number = 2 + index % addresses  # 127.0.0.2, 127.0.0.3, ...
    source = f"127.0.{number // 256}.{number % 256}"
    _, subscriber = await asyncio.wait_for(loop.create_connection(
        lambda: Subscriber(topic, join_payload), "127.0.0.1", port, local_addr=(source, 0)), 10)
    await asyncio.wait_for(subscriber.joined, 10)
    return subscriber


def plan(uids):
    """(topic, join payload) of every socket: the users', the fan-out's, then the idle public ones."""
    for index in range(users):
        yield f"realtime:favorites-{index}", {"config": {"postgres_changes": [{
            "event": "*", "schema": "public", "table": "user_favorites", "filter": f"user_id=eq.{uids[index]}"}]},
            "access_token": tokens[index]}
    for index in range(fanout):
        yield "realtime:quotes", {"config": {"postgres_changes": [{
            "event": "INSERT", "schema": "public", "table": "quotes"}]}}
    for index in range(subscribers - users - fanout):
        yield "realtime:quote-of-day", {"config": {"postgres_changes": [{
            "event": "*", "schema": "public", "table": "quote_of_day"}]}}


async def heartbeats(sockets):
    """Every socket's Phoenix heartbeat once per HEARTBEAT_SECONDS, spread evenly over the period."""
    slices = 100
    while True:
        for part in range(slices):
            for subscriber in sockets[part::slices]:
                subscriber.send({"topic": "phoenix", "event": "heartbeat", "payload": {}})
            await asyncio.sleep(HEARTBEAT_SECONDS / slices)


async def http(method, path, headers, body=None):
    """One HTTP/1.1 request on a fresh loopback connection; returns (status, body)."""
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 5)
    try:
        data = json.dumps(body).encode() if body is not None else b""
        head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        writer.write(f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}Content-Length: {len(data)}\r\n"
                     f"Connection: close\r\n\r\n".encode() + data)
        answer = await asyncio.wait_for(reader.read(), 10)
        return int(answer.split(b" ", 2)[1]), answer.split(b"\r\n\r\n", 1)[-1]
    finally:
        writer.close()


def load_average():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def open_descriptors(process):
    return len(os.listdir(f"/proc/{process}/fd"))


async def wrk(path, holder=None, profile=None):
    """One wrk run: requests/s, p99 (ms), non-2xx answers, requests, the server's CPU seconds and the holder's."""
    server_before = cpu_seconds(pid)
    holder_before = cpu_seconds(holder.pid) if holder else 0.0
    process = await asyncio.create_subprocess_exec(
        "wrk", "-t1", f"-c{connections}", f"-d{duration}s", "--latency", f"http://127.0.0.1:{port}{path}",
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if profile:
        recorder = await asyncio.create_subprocess_exec(
            "perf", "record", "-g", "-o", profile, "-p", str(pid), "--", "sleep", str(max(1, duration - 1)),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        await asyncio.wait_for(recorder.wait(), duration + 30)
    output = (await asyncio.wait_for(process.communicate(), duration + 30))[0].decode()
    server_cpu = cpu_seconds(pid) - server_before
    holder_cpu = cpu_seconds(holder.pid) - holder_before if holder else 0.0
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    requests = int(re.search(r"(\d+) requests in", output).group(1))
    p99 = re.search(r"\s99%\s+([\d.]+)(us|ms|s)", output)
    p99_ms = float(p99.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[p99.group(2)] if p99 else float("nan")
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    return {"rate": rate, "p99": p99_ms, "errors": int(errors.group(1)) if errors else 0, "requests": requests,
            "server_cpu": server_cpu, "holder_cpu": holder_cpu}


async def throughput(label, holder=None, profile=None):
    results = {}
    for path in routes:
        result = results[path] = await wrk(path, holder, profile if path == routes[0] else None)
        print(f"wrk {label}: GET {path}: {result['rate']:.0f} requests/s, p99 {result['p99']:.2f} ms, "
              f"non-2xx {result['errors']}, server CPU {1e6 * result['server_cpu'] / result['requests']:.1f} us per "
              f"request ({result['server_cpu']:.2f} s), holder CPU {result['holder_cpu']:.2f} s, "
              f"load {load_average()}", flush=True)
    return results


async def start_holder(joins_file):
    """The C holder with every subscriber joined; returns the process once it says so."""
    holder = await asyncio.create_subprocess_exec(
        holder_binary, str(port), f"/realtime/v1/websocket?apikey={anon}&vsn=1.0.0", str(addresses), joins_file,
        str(HEARTBEAT_SECONDS), "600", stdout=subprocess.PIPE)
    line = (await asyncio.wait_for(holder.stdout.readline(), 120)).decode().strip()
    print(f"holder: {line}", flush=True)
    if not line.startswith("joined"):
        raise RuntimeError("the holder did not join its subscribers")
    return holder, int(line.split()[1])


async def stop_holder(holder, descriptors):
    """Ends the holder and waits (at most 30 s) until the server has released its sockets."""
    holder.terminate()
    line = (await asyncio.wait_for(holder.stdout.readline(), 10)).decode().strip()
    await asyncio.wait_for(holder.wait(), 10)
    print(f"holder: {line}", flush=True)
    deadline = time.monotonic() + 30
    while open_descriptors(pid) > descriptors + 64 and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    await asyncio.sleep(1)


async def interleaved(uids):
    """ROUNDS rounds of (without, with) on every route; the first round also measures memory and idle CPU."""
    joins_file = os.path.join(os.path.dirname(tokens_file), "realtime-joins.txt")
    with open(joins_file, "w") as joins:
        for topic, payload in plan(uids):
            joins.write(json.dumps({"topic": topic, "event": "phx_join", "payload": payload, "ref": "1",
                                    "join_ref": "1"}, separators=(",", ":")) + "\n")
    without, with_ = [], []
    memory = idle = None
    for index in range(rounds):
        without.append(await throughput(f"round {index + 1} without subscribers", None,
                                        perf_without if index + 1 == perf_round else None))
        await asyncio.sleep(1)
        if memory is None:
            quiet = cpu_seconds(pid)
            await asyncio.sleep(5)
            quiet = cpu_seconds(pid) - quiet
        descriptors, before = open_descriptors(pid), rss_kib(pid)
        started = time.monotonic()
        holder, joined = await start_holder(joins_file)
        opened = time.monotonic() - started
        await asyncio.sleep(3)
        if memory is None:
            memory = (before, rss_kib(pid), joined)
            server_idle, holder_idle = cpu_seconds(pid), cpu_seconds(holder.pid)
            await asyncio.sleep(5)
            idle = (cpu_seconds(pid) - server_idle, cpu_seconds(holder.pid) - holder_idle, quiet)
            print(f"server VmRSS {before / 1024:.1f} MiB before, {memory[1] / 1024:.1f} MiB with {joined} "
                  f"subscribers (joined in {opened:.1f} s): {(memory[1] - before) / max(1, joined):.1f} KiB each; "
                  f"CPU with them idle (heartbeats only) over 5 s: server {idle[0]:.2f} s (without them "
                  f"{idle[2]:.2f} s), holder {idle[1]:.2f} s",
                  flush=True)
        with_.append(await throughput(f"round {index + 1} with {joined} subscribers", holder,
                                      perf_output if index + 1 == perf_round else None))
        await stop_holder(holder, descriptors)
    return without, with_, memory, idle


def report(without, with_):
    """Per route: the median of the rounds' with/without ratios, of throughput and of CPU per request."""
    lines = []
    for path in routes:
        rates = [w[path]["rate"] / a[path]["rate"] for a, w in zip(without, with_)]
        cost = lambda run: run[path]["server_cpu"] / run[path]["requests"]
        costs = [cost(w) / cost(a) for a, w in zip(without, with_)]
        holder = statistics.median(w[path]["holder_cpu"] / duration for w in with_)
        lines.append(
            f"  GET {path}: throughput with/without, median of {len(rates)} rounds {100 * statistics.median(rates):.0f} % "
            f"(rounds: {', '.join(f'{100 * r:.0f}' for r in rates)}; goal >= 90 %); "
            f"{statistics.median(w[path]['rate'] for w in with_):.0f} / "
            f"{statistics.median(a[path]['rate'] for a in without):.0f} requests/s (medians)")
        lines.append(
            f"    server CPU per request: {1e6 * statistics.median(cost(w) for w in with_):.1f} us with, "
            f"{1e6 * statistics.median(cost(a) for a in without):.1f} us without: with/without median "
            f"{100 * statistics.median(costs):.0f} % (rounds: {', '.join(f'{100 * c:.0f}' for c in costs)}); "
            f"holder CPU {100 * holder:.1f} % of a core")
    return lines


async def own_changes(sockets):
    """Each write by one user, timed to that user's socket: from the request and from the answer (committed)."""
    from_request, from_answer, missed, failed = [], [], 0, 0
    for index in range(writes):
        user = index % users
        method = "PUT" if (index // users) % 2 == 0 else "DELETE"
        subscriber = sockets[user]
        subscriber.changes.clear()
        subscriber.changed.clear()
        sent = time.monotonic()
        status, _ = await http(method, f"/v1/favorites/{quote}", {"Authorization": f"Bearer {tokens[user]}"})
        answered = time.monotonic()
        if status >= 300:
            failed += 1
            continue
        try:
            await asyncio.wait_for(subscriber.changed.wait(), 5)
        except asyncio.TimeoutError:
            missed += 1
            continue
        arrived = subscriber.changes[0][0]
        from_request.append((arrived - sent) * 1000)
        from_answer.append((arrived - answered) * 1000)
    print(f"own changes: {writes} writes by {min(users, writes)} users, {failed} refused, {missed} not delivered "
          f"within 5 s")
    print(f"  delay from the write's request: {summary(from_request)}")
    print(f"  delay from the write's answer:  {summary(from_answer)}")
    return from_request


async def fan_out(sockets, idle):
    """Each quote insert, timed to every one of the fan-out sockets."""
    each, last, missed = [], [], 0
    headers = {"apikey": service, "Authorization": f"Bearer {service}", "Content-Type": "application/json",
               "Prefer": "return=minimal"}
    for index in range(inserts):
        for subscriber in sockets:
            subscriber.changes.clear()
        marker = f"Realtime bench quote {run}-{index}"
        sent = time.monotonic()
        status, body = await http("POST", "/rest/v1/quotes", headers,
                                  {"text": marker, "author": "Bench Author", "category": "wisdom"})
        if status >= 300:
            raise RuntimeError(f"insert refused: {status} {body[:300]!r}")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and sum(1 for s in sockets if s.changes) < len(sockets):
            await asyncio.sleep(0.005)
        delays = [(s.changes[0][0] - sent) * 1000 for s in sockets if s.changes and marker.encode() in s.changes[0][1]]
        missed += len(sockets) - len(delays)
        each.extend(delays)
        if len(delays) == len(sockets):
            last.append(max(delays))
        await asyncio.sleep(0.2)
    strays = sum(len(s.changes) for s in idle)
    print(f"fan-out: {inserts} quote inserts to {len(sockets)} sockets, {missed} deliveries missing after 5 s, "
          f"{strays} changes on the other sockets")
    print(f"  delay from the insert's request to each socket:   {summary(each)}")
    print(f"  delay from the insert's request to the last one:  {summary(last)}")
    return each, last


async def hold_in_python(uids):
    """Every subscriber on this script's own sockets, joined, with heartbeats; the heartbeats' task."""
    sockets, started, failures = [], time.monotonic(), []
    wanted = list(plan(uids))
    batch = 200
    for first in range(0, len(wanted), batch):
        results = await asyncio.gather(
            *(subscribe(first + offset, topic, payload)
              for offset, (topic, payload) in enumerate(wanted[first:first + batch])), return_exceptions=True)
        for result in results:
            (failures if isinstance(result, BaseException) else sockets).append(result)
        if len(failures) > 50:
            break
    print(f"subscribers joined: {len(sockets)} of {len(wanted)} from {min(addresses, len(wanted))} addresses in "
          f"{time.monotonic() - started:.1f} s ({users} users on user_favorites, {fanout} anon on quotes, the rest "
          f"anon on quote_of_day)", flush=True)
    for reason in sorted({str(failure) or type(failure).__name__ for failure in failures})[:5]:
        print(f"  refused: {reason}")
    return sockets, asyncio.create_task(heartbeats(sockets))


async def main():
    uids = [user_id(token) for token in tokens[:users]]
    print(f"cores: {os.cpu_count()}, load: {load_average()}", flush=True)
    without, with_, (before, after, joined), idle = await interleaved(uids)
    own = each = last = []
    if latency:
        sockets, beating = await hold_in_python(uids)
        own = await own_changes(sockets[:users])
        each, last = await fan_out(sockets[users:users + fanout], sockets[users + fanout:])
        lost = sum(1 for s in sockets if s.closed)
        print(f"sockets lost during the latency run: {lost}; VmRSS at the end: {rss_kib(pid) / 1024:.1f} MiB")
        beating.cancel()
        for subscriber in sockets:
            subscriber.closed = True
            subscriber.transport.close()
        await asyncio.sleep(1)
    print("summary:")
    print(f"  idle subscribers: {joined}, {(after - before) / max(1, joined):.1f} KiB each (goal <= 10 KiB); "
          f"server CPU with them idle: {100 * idle[0] / 5:.1f} % of a core, without them {100 * idle[2] / 5:.1f} % "
          f"(holder {100 * idle[1] / 5:.1f} %)")
    if latency:
        print(f"  own change p99 {percentile(own, 0.99):.2f} ms (goal <= 50); fan-out to {fanout}: each p99 "
              f"{percentile(each, 0.99):.2f} ms, last p99 {percentile(last, 0.99):.2f} ms (goal <= 250)")
    for line in report(without, with_):
        print(line)
    print(f"  load average at the end: {load_average()}")


asyncio.run(asyncio.wait_for(main(), 1800))
