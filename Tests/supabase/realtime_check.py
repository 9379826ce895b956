"""supabase-py's realtime client (realtime 2.34.1) against the server's /realtime/v1/websocket.

Environment: BASE_URL (http://127.0.0.1:<port>), ANON_KEY, USER_TOKEN, OTHER_TOKEN, USER_ID, QUOTE_ID, OTHER_QUOTE_ID.
A channel on the user's favorites sees the user's insert and delete made through /v1 and nothing of another
user's; broadcast with self and presence between two clients. Prints REALTIME OK on success.
"""

import asyncio
import json
import os
import urllib.request

from realtime import AsyncRealtimeClient, RealtimeSubscribeStates

BASE = os.environ["BASE_URL"]
KEY = os.environ["ANON_KEY"]


def v1(method: str, path: str, token: str) -> int:
    request = urllib.request.Request(BASE + path, method=method, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status


async def subscribed(channel) -> None:
    states: list = []
    await channel.subscribe(lambda state, error: states.append((state, error)))
    assert states and states[-1][0] == RealtimeSubscribeStates.SUBSCRIBED, states


async def main() -> None:
    user, token, other = os.environ["USER_ID"], os.environ["USER_TOKEN"], os.environ["OTHER_TOKEN"]
    quote, other_quote = os.environ["QUOTE_ID"], os.environ["OTHER_QUOTE_ID"]

    client = AsyncRealtimeClient(BASE + "/realtime/v1", KEY)
    await client.connect()
    await client.set_auth(token)
    changes: asyncio.Queue = asyncio.Queue()
    favorites = client.channel("favorites")
    favorites.on_postgres_changes(
        "*", schema="public", table="user_favorites", filter=f"user_id=eq.{user}", callback=changes.put_nowait
    )
    await subscribed(favorites)

    assert v1("PUT", f"/v1/favorites/{other_quote}", other) == 201
    assert v1("PUT", f"/v1/favorites/{quote}", token) == 201
    inserted = await asyncio.wait_for(changes.get(), 10)
    assert inserted["data"]["type"] == "INSERT", inserted
    assert inserted["data"]["record"]["quote_id"] == quote, inserted
    assert v1("DELETE", f"/v1/favorites/{quote}", token) == 204
    deleted = await asyncio.wait_for(changes.get(), 10)
    assert deleted["data"]["type"] == "DELETE", deleted
    assert deleted["data"]["old_record"]["quote_id"] == quote, deleted

    # Broadcast with self, and presence, between two clients.
    second = AsyncRealtimeClient(BASE + "/realtime/v1", KEY)
    await second.connect()
    heard: asyncio.Queue = asyncio.Queue()
    own: asyncio.Queue = asyncio.Queue()
    room_a = client.channel("room", {"config": {"broadcast": {"self": True, "ack": False}, "presence": {"key": "ada"}}})
    room_a.on_broadcast("wave", own.put_nowait)
    room_b = second.channel("room", {"config": {"presence": {"key": "bob"}}})
    room_b.on_broadcast("wave", heard.put_nowait)
    synced: asyncio.Queue = asyncio.Queue()
    room_b.on_presence_sync(lambda: synced.put_nowait(dict(room_b.presence.state)))
    await subscribed(room_a)
    await subscribed(room_b)
    await room_a.send_broadcast("wave", {"hello": "bob"})
    got = await asyncio.wait_for(heard.get(), 10)
    assert got["payload"]["hello"] == "bob", got
    mine = await asyncio.wait_for(own.get(), 10)
    assert mine["payload"]["hello"] == "bob", mine
    await room_a.track({"status": "online"})
    while True:
        state = await asyncio.wait_for(synced.get(), 10)
        if "ada" in state:
            break
    await client.close()
    await second.close()
    print("REALTIME OK")


asyncio.run(main())
