"""Attacks on the Realtime door beside legitimate traffic, for bench/realtime-abuse.sh.

Legitimate traffic, in every phase: USERS subscribers (vsn 1.0.0, one user each, from 127.0.0.2) on their own
favorites, one user's write at a time through /v1 (delay from the request to the user's socket), and an HTTP client
from 127.0.0.1 reading GET /v1/quotes?page=1 at a steady pace over keep-alive connections (a new one every 20
requests). First alone, then beside each attack family, each from its own 127.0.x.y addresses:
  sockets   -- SOCKET_ADDRESSES addresses, each opening up to 80 sockets (the cap is 64 an address) and holding them;
  joins     -- sockets sending phx_join on new topics as fast as they can (past 100 channels and 50 messages a second);
  messages  -- sockets sending broadcasts as fast as they can (past 50 a second), reconnecting when closed;
  oversize  -- sockets sending 1 MiB frames (the limit is 64 KiB), reconnecting when closed;
  slow      -- sockets that join a topic and never read, while another floods that topic with 6 KB broadcasts;
  handshake -- half-open upgrades: the request head sent a byte a second and never finished (slowloris).
Every phase lasts PHASE seconds; every loop is bounded by it and by a fixed number of sockets. Loopback only.
Prints, per phase, the legitimate clients' p50/p99 and errors, what the attackers got, and the server's Realtime
counters (/metrics) that moved.

Usage: python3 bench/realtime-abuse.py PORT ANON_KEY TOKENS_FILE QUOTE_ID
"""

import asyncio
import base64
import json
import multiprocessing
import os
import sys
import time
from collections import Counter

from websocket_frames import masked_frame

port, anon, tokens_file, quote = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
port = int(port)
tokens = [line.strip() for line in open(tokens_file) if line.strip()]
PHASE = float(os.environ.get("PHASE", "12"))
SOCKET_ADDRESSES = int(os.environ.get("SOCKET_ADDRESSES", "20"))
HTTP_RATE = float(os.environ.get("HTTP_RATE", "100"))
PATH = f"/realtime/v1/websocket?apikey={anon}&vsn=1.0.0"


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def figures(values):
    return f"p50 {percentile(values, 0.5):6.2f} ms, p99 {percentile(values, 0.99):7.2f} ms ({len(values)})"


def phoenix(topic, event, payload, ref):
    return masked_frame(json.dumps({"topic": topic, "event": event, "payload": payload, "ref": str(ref),
                                    "join_ref": str(ref)}, separators=(",", ":")).encode())


def user_id(token):
    claims = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(claims + "=" * (-len(claims) % 4)))["sub"]


class Socket:
    """A WebSocket client on asyncio streams: handshake, frames in and out; notes its close code."""

    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer
        self.close_code = None

    @classmethod
    async def open(cls, source, timeout=5, read_limit=None):
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0), limit=2**22), timeout)
        if read_limit:
            import socket as _socket
            writer.get_extra_info("socket").setsockopt(_socket.SOL_SOCKET, _socket.SO_RCVBUF, read_limit)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(f"GET {PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
        status = int(head.split(b" ", 2)[1])
        if status != 101:
            writer.close()
            return status
        return cls(reader, writer)

    async def frame(self):
        """(opcode, payload) of the next frame; None at the end."""
        try:
            first = await self.reader.readexactly(2)
            length = first[1] & 0x7F
            if length == 126:
                length = int.from_bytes(await self.reader.readexactly(2), "big")
            elif length == 127:
                length = int.from_bytes(await self.reader.readexactly(8), "big")
            payload = await self.reader.readexactly(length)
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            return None
        if first[0] & 0x0F == 0x8:
            self.close_code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 1005
        return first[0] & 0x0F, payload

    def send(self, data):
        if not self.writer.is_closing():
            self.writer.write(data)

    def close(self):
        self.writer.close()


async def until_closed(sock, deadline):
    """Reads (discarding) until the server closes or the deadline; the close code, 'cut' or 'open'."""
    while time.monotonic() < deadline:
        try:
            got = await asyncio.wait_for(sock.frame(), max(0.01, deadline - time.monotonic()))
        except asyncio.TimeoutError:
            return "open"
        if got is None:
            return "cut" if sock.close_code is None else str(sock.close_code)
        if got[0] == 0x8:
            return str(sock.close_code)
    return "open"


# ---------------------------------------------------------------------------------------------------- legitimate

class Subscriber:
    def __init__(self, index):
        self.index, self.token = index, tokens[index]
        self.arrivals = asyncio.Queue()
        self.errors = 0

    async def start(self):
        self.socket = await Socket.open("127.0.0.2")
        if not isinstance(self.socket, Socket):
            raise RuntimeError(f"legitimate subscriber refused: {self.socket}")
        self.socket.send(phoenix(f"realtime:mine-{self.index}", "phx_join", {
            "config": {"postgres_changes": [{"event": "*", "schema": "public", "table": "user_favorites",
                                             "filter": f"user_id=eq.{user_id(self.token)}"}]},
            "access_token": self.token}, 1))
        self.reader = asyncio.create_task(self.read())

    async def read(self):
        beat = time.monotonic()
        while True:
            if time.monotonic() - beat > 20:
                self.socket.send(phoenix("phoenix", "heartbeat", {}, 2))
                beat = time.monotonic()
            try:
                got = await asyncio.wait_for(self.socket.frame(), 1)
            except asyncio.TimeoutError:
                continue
            if got is None:
                self.errors += 1
                return
            if b'"postgres_changes"' in got[1]:
                self.arrivals.put_nowait(time.monotonic())


async def http_get(state, path):
    """One GET on the client's keep-alive connection (a new one every 20 requests or after an error)."""
    if state.get("writer") is None or state["used"] >= 20:
        if state.get("writer"):
            state["writer"].close()
        state["reader"], state["writer"] = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 5)
        state["used"] = 0
    state["used"] += 1
    state["writer"].write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    head = await asyncio.wait_for(state["reader"].readuntil(b"\r\n\r\n"), 5)
    length = int([line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")][0])
    await asyncio.wait_for(state["reader"].readexactly(length), 5)
    return int(head.split(b" ", 2)[1])


async def legitimate_http(deadline, out):
    state = {}
    interval = 1 / HTTP_RATE
    next_at = time.monotonic()
    while time.monotonic() < deadline:
        started = time.monotonic()
        try:
            status = await http_get(state, "/v1/quotes?page=1")
            if status == 200:
                out["http"].append((time.monotonic() - started) * 1000)
            else:
                out["http_errors"][status] += 1
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, IndexError, ValueError) as error:
            out["http_errors"][type(error).__name__] += 1
            state["writer"] = None
        next_at += interval
        await asyncio.sleep(max(0, next_at - time.monotonic()))


async def request(method, path, headers):
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 5)
    try:
        head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        writer.write(f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}Content-Length: 0\r\n"
                     f"Connection: close\r\n\r\n".encode())
        answer = await asyncio.wait_for(reader.read(), 10)
        if not answer.startswith(b"HTTP/"):
            raise ConnectionResetError("closed without an answer")  # a full connection table turns it away
        return int(answer.split(b" ", 2)[1])
    finally:
        writer.close()


WRITES = [0]  # across phases, so that each user's writes alternate PUT and DELETE


async def legitimate_changes(subscribers, deadline, out):
    while time.monotonic() < deadline:
        index = WRITES[0]
        subscriber = subscribers[index % len(subscribers)]
        method = "PUT" if (index // len(subscribers)) % 2 == 0 else "DELETE"
        WRITES[0] += 1
        while not subscriber.arrivals.empty():
            subscriber.arrivals.get_nowait()
        sent = time.monotonic()
        try:
            status = await request(method, f"/v1/favorites/{quote}", {"Authorization": f"Bearer {subscriber.token}"})
        except (OSError, asyncio.TimeoutError) as error:
            out["change_errors"][type(error).__name__] += 1
            continue
        if status >= 300:
            out["change_errors"][f"write {status}"] += 1
            continue
        try:
            arrived = await asyncio.wait_for(subscriber.arrivals.get(), 5)
            out["changes"].append((arrived - sent) * 1000)
        except asyncio.TimeoutError:
            out["change_errors"]["not delivered in 5 s"] += 1
        await asyncio.sleep(0.05)


async def legitimate_newcomers(deadline, out):
    """A device connecting anew every half second, each from an address of its own (127.0.9.x): its handshake and
    join, answered or not. A flood must not take every place from clients that come later."""
    number = 0
    while time.monotonic() < deadline:
        number += 1
        try:
            sock = await Socket.open(f"127.0.9.{2 + number % 250}", timeout=3)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as error:
            out["newcomers"][f"connect {type(error).__name__}"] += 1
        else:
            if not isinstance(sock, Socket):
                out["newcomers"][str(sock)] += 1
            else:
                sock.send(phoenix("realtime:newcomer", "phx_join", {"config": {}}, 1))
                reply = None
                try:
                    while reply is None:
                        got = await asyncio.wait_for(sock.frame(), 3)
                        if got is None:
                            break
                        if got[0] == 0x1 and json.loads(got[1]).get("event") == "phx_reply":
                            reply = json.loads(got[1])["payload"]["status"]
                except asyncio.TimeoutError:
                    pass
                out["newcomers"]["joined" if reply == "ok" else f"join {reply or 'unanswered'}"] += 1
                sock.close()
        await asyncio.sleep(0.5)


# ------------------------------------------------------------------------------------------------------- attacks

def address(group, number):
    return f"127.0.{group}.{2 + number}"


async def socket_flood(deadline, got):
    held = []

    async def one(source):
        try:
            sock = await Socket.open(source, timeout=3)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as error:
            got[f"connect {type(error).__name__}"] += 1
            return
        if isinstance(sock, Socket):
            got["101"] += 1
            held.append(sock)
        else:
            got[str(sock)] += 1

    await asyncio.gather(*(one(address(1, number)) for number in range(SOCKET_ADDRESSES) for _ in range(80)))
    # Then the flood keeps trying: one more socket from each address every half second, so that any place freed
    # is taken again; heartbeats keep the held sockets from the idle close while the phase lasts.
    beat = time.monotonic()
    while time.monotonic() < deadline:
        await asyncio.gather(*(one(address(1, number)) for number in range(SOCKET_ADDRESSES)))
        if time.monotonic() - beat >= 5:
            beat = time.monotonic()
            for sock in held:
                sock.send(phoenix("phoenix", "heartbeat", {}, 1))
        await asyncio.sleep(min(0.5, max(0, deadline - time.monotonic())))
    closed = sum(1 for sock in held if sock.writer.is_closing())
    got["held to the end"] = len(held) - closed
    for sock in held:
        sock.close()


async def reconnecting(group, workers, rounds, deadline, got, attack):
    """WORKERS attackers from 127.0.GROUP.x, each opening a socket, running `attack` on it, and again (at most
    ROUNDS times) until the deadline."""
    async def worker(number):
        for _ in range(rounds):
            if time.monotonic() >= deadline:
                return
            sock = await Socket.open(address(group, number))
            if not isinstance(sock, Socket):
                got[f"handshake {sock}"] += 1
                await asyncio.sleep(1)
                continue
            got["sockets"] += 1
            await attack(number, sock)
            sock.close()

    await asyncio.gather(*(worker(number) for number in range(workers)))


async def join_flood(deadline, got):
    async def attack(number, sock):
        for ref in range(400):
            sock.send(phoenix(f"realtime:flood-{number}-{ref}", "phx_join", {"config": {}}, ref))
        got["joins sent"] += 400
        replies = Counter()
        while time.monotonic() < deadline:
            try:
                frame = await asyncio.wait_for(sock.frame(), max(0.01, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                break
            if frame is None or frame[0] == 0x8:
                got[f"closed {sock.close_code or 'cut'}"] += 1
                break
            if b'"status":"ok"' in frame[1]:
                replies["join ok"] += 1
            elif b"too many channels" in frame[1]:
                replies["join refused: channels"] += 1
        got.update(replies)

    await reconnecting(2, 10, 50, deadline, got, attack)


async def message_flood(deadline, got):
    async def attack(number, sock):
        sock.send(phoenix("realtime:chatter", "phx_join", {"config": {}}, 0))
        reading = asyncio.create_task(until_closed(sock, deadline))
        sent = 0
        while not reading.done() and time.monotonic() < deadline and sent < 5000:
            sock.send(phoenix("realtime:chatter", "broadcast",
                              {"type": "broadcast", "event": "spam", "payload": {"n": sent}}, sent + 1))
            sent += 1
            if sent % 50 == 0:
                await asyncio.sleep(0.01)
        got["messages sent"] += sent
        got[f"closed {await reading}"] += 1

    await reconnecting(3, 10, 100, deadline, got, attack)


async def oversize_flood(deadline, got):
    big = masked_frame(b"", 0x2, length=1 << 20) + os.urandom(1 << 20)  # the header claims 1 MiB; masking is moot

    async def attack(number, sock):
        sock.send(big)
        try:
            await asyncio.wait_for(sock.writer.drain(), 5)
        except (OSError, asyncio.TimeoutError):
            pass
        got[f"closed {await until_closed(sock, min(deadline, time.monotonic() + 5))}"] += 1

    await reconnecting(4, 5, 200, deadline, got, attack)


async def slow_readers(deadline, got):
    readers = []
    for number in range(20):
        sock = await Socket.open(address(5, number), read_limit=4096)
        if isinstance(sock, Socket):
            sock.send(phoenix("realtime:slow", "phx_join", {"config": {}}, 1))
            readers.append(sock)
    got["slow readers"] = len(readers)
    pad = "x" * 6900

    async def sender(number):
        sock = await Socket.open(address(5, 100 + number))
        sock.send(phoenix("realtime:slow", "phx_join", {"config": {}}, 1))
        sent = 0
        draining = asyncio.create_task(until_closed(sock, deadline))
        while time.monotonic() < deadline and not draining.done():
            sock.send(phoenix("realtime:slow", "broadcast",
                              {"type": "broadcast", "event": "big", "payload": {"p": pad}}, sent + 2))
            sent += 1
            await asyncio.sleep(1 / 40)  # under the 50 a second a socket may send
        got["broadcasts of 7 KB sent"] += sent
        got[f"sender {await draining}"] += 1
        return sock

    senders = await asyncio.gather(*(sender(number) for number in range(4)))
    # The readers read now: a cut one ends without a close frame.
    outcomes = await asyncio.gather(*(until_closed(sock, time.monotonic() + 3) for sock in readers))
    got.update(f"reader {outcome}" for outcome in outcomes)
    for sock in readers + list(senders):
        sock.close()


async def half_open(deadline, got):
    head = f"GET {PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n".encode()

    async def one(number, index):
        started = time.monotonic()
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", port, local_addr=(address(6, number), 0)), 3)
        except (OSError, asyncio.TimeoutError) as error:
            got[f"connect {type(error).__name__}"] += 1
            return
        got["opened"] += 1
        position = 0
        try:
            while time.monotonic() < deadline:
                writer.write(head[position:position + 1] if position < len(head) else b"X")
                position += 1
                try:
                    data = await asyncio.wait_for(reader.read(1024), 1)
                    if not data:
                        got["closed by the server"] += 1
                        got["seconds held (sum)"] += round(time.monotonic() - started)
                        return
                    got["answered " + data.split(b"\r\n")[0].decode(errors="replace")[:40]] += 1
                    return
                except asyncio.TimeoutError:
                    pass
            got["still open at the end"] += 1
        except (OSError, ConnectionError):
            got["reset by the server"] += 1
        finally:
            writer.close()

    await asyncio.gather(*(one(number, index) for number in range(10) for index in range(40)))


ATTACKS = {"sockets": socket_flood, "joins": join_flood, "messages": message_flood, "oversize": oversize_flood,
           "slow": slow_readers, "handshake": half_open}


def attack_process(name, deadline, results):
    """Runs one attack in a process of its own, so that its CPU does not slow the legitimate clients' loop."""
    got = Counter()
    try:
        asyncio.run(asyncio.wait_for(ATTACKS[name](deadline, got), PHASE + 30))
    except Exception as error:  # reported, not hidden
        got[f"attack ended: {type(error).__name__} {error}"[:120]] += 1
    results.put(dict(got))


async def metrics():
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    text = (await reader.read()).decode(errors="replace")
    writer.close()
    values = {}
    for line in text.split("\n"):
        if line.startswith(("realtime_refusals_total", "realtime_dropped_total")):
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
    return values


async def phase(name, subscribers):
    before = await metrics()
    out = {"http": [], "http_errors": Counter(), "changes": [], "change_errors": Counter(), "newcomers": Counter()}
    got = Counter()
    deadline = time.monotonic() + PHASE
    results = multiprocessing.Queue()
    attacker = None
    if name in ATTACKS:
        attacker = multiprocessing.Process(target=attack_process, args=(name, deadline, results))
        attacker.start()
    await asyncio.gather(
        legitimate_http(deadline, out), legitimate_changes(subscribers, deadline, out),
        legitimate_newcomers(deadline, out))
    if attacker:
        got.update(await asyncio.get_running_loop().run_in_executor(None, results.get, True, PHASE + 40))
        attacker.join(10)
    await asyncio.sleep(1)
    after = await metrics()
    moved = {key.split("{")[1].rstrip("}"): int(after[key] - before.get(key, 0))
             for key in after if after[key] != before.get(key, 0)}
    lost = sum(s.errors for s in subscribers)
    print(f"{name:9} | own change {figures(out['changes'])} | GET {figures(out['http'])} | "
          f"errors: changes {dict(out['change_errors']) or 0}, http {dict(out['http_errors']) or 0}, "
          f"subscribers lost {lost}; newcomers {dict(out['newcomers'])}", flush=True)
    if got:
        print(f"          attackers got: {dict(got)}", flush=True)
    if moved:
        print(f"          server counted: {moved}", flush=True)


async def main():
    print(f"cores: {os.cpu_count()}, phase {PHASE:.0f} s, legitimate: {len(tokens)} subscribers, GET at "
          f"{HTTP_RATE:.0f}/s", flush=True)
    subscribers = [Subscriber(index) for index in range(len(tokens))]
    for subscriber in subscribers:
        await subscriber.start()
    await asyncio.sleep(1)
    wanted = sys.argv[5:] or ["alone", *ATTACKS, "alone"]
    for name in wanted:
        await phase(name, subscribers)
        await asyncio.sleep(3)


asyncio.run(asyncio.wait_for(main(), 900))
