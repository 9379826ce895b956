"""QuoteVault's Realtime door with the official supabase-py client (supabase==2.34.1, realtime 2.34.1), run by
Tests/SupabaseAPITests/SupabaseClientTests.swift against the real server and database.

Two devices of one user (A1 listens, A2 writes), and another user (B):
- postgres_changes on user_favorites filtered by the user: an insert and a delete made through /rest/v1 and through
  /v1 by the other device arrive, B (listening to the whole table) sees none of them;
- broadcast between two clients (self off: the sender hears nothing of its own), presence between two clients;
- a refreshed token (access_token) keeps delivering; after the listening session signs out, nothing more arrives.
Every wait is bounded.
"""
import asyncio
import os
import uuid

import httpx
from supabase import acreate_client

URL = os.environ.get("SB_URL", "http://127.0.0.1:54321")
ANON = os.environ.get("SB_ANON_KEY", "anon-key-placeholder")
PASSWORD = "s3cret-Passw0rd"
WAIT = 10.0


async def until(condition, what, seconds=WAIT):
    """Polls a condition every 20 ms, at most `seconds`."""
    for _ in range(int(seconds / 0.02)):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise SystemExit(f"timed out waiting for {what}")


async def subscribed(channel):
    states = []
    await channel.subscribe(lambda state, error: states.append((str(state), error)))
    await until(lambda: states, "a join reply")
    state, error = states[-1]
    assert state.endswith("SUBSCRIBED") and error is None, states
    return channel


async def main():
    email = f"qv-rt-{uuid.uuid4().hex[:8]}@example.com"
    a1 = await acreate_client(URL, ANON)
    await a1.auth.sign_up({"email": email, "password": PASSWORD})
    session1 = (await a1.auth.sign_in_with_password({"email": email, "password": PASSWORD})).session
    alice_id = session1.user.id
    a2 = await acreate_client(URL, ANON)
    session2 = (await a2.auth.sign_in_with_password({"email": email, "password": PASSWORD})).session
    b = await acreate_client(URL, ANON)
    await b.auth.sign_up({"email": f"qv-rt-{uuid.uuid4().hex[:8]}@example.com", "password": PASSWORD})

    quotes = (await a2.table("quotes").select("id").order("id").limit(3).execute()).data
    assert len(quotes) == 3, quotes
    first, second, third = (q["id"] for q in quotes)

    # --- postgres_changes: own rows only ---
    alice_changes, bob_changes = [], []
    await subscribed(a1.channel("alice-favorites").on_postgres_changes(
        "*", schema="public", table="user_favorites", filter=f"user_id=eq.{alice_id}",
        callback=alice_changes.append))
    await subscribed(b.channel("bob-favorites").on_postgres_changes(
        "*", schema="public", table="user_favorites", callback=bob_changes.append))

    await a2.table("user_favorites").insert({"user_id": alice_id, "quote_id": first}).execute()
    await until(lambda: len(alice_changes) >= 1, "the /rest/v1 insert")
    data = alice_changes[0]["data"]
    assert (data["type"], data["table"], data["schema"]) == ("INSERT", "user_favorites", "public"), data
    assert data["record"]["quote_id"] == first and data["record"]["user_id"] == alice_id, data

    await a2.table("user_favorites").delete().eq("user_id", alice_id).eq("quote_id", first).execute()
    await until(lambda: len(alice_changes) >= 2, "the /rest/v1 delete")
    data = alice_changes[1]["data"]
    assert data["type"] == "DELETE" and data["old_record"]["quote_id"] == first, data

    bearer = {"Authorization": f"Bearer {session2.access_token}"}
    async with httpx.AsyncClient(base_url=URL, timeout=WAIT) as http:
        assert (await http.put(f"/v1/favorites/{second}", headers=bearer)).status_code == 201
        await until(lambda: len(alice_changes) >= 3, "the /v1 insert")
        assert alice_changes[2]["data"]["type"] == "INSERT", alice_changes[2]
        assert alice_changes[2]["data"]["record"]["quote_id"] == second, alice_changes[2]
        assert (await http.delete(f"/v1/favorites/{second}", headers=bearer)).status_code == 204
        await until(lambda: len(alice_changes) >= 4, "the /v1 delete")
        assert alice_changes[3]["data"]["type"] == "DELETE", alice_changes[3]

    await asyncio.sleep(0.5)  # anything of Alice's that would reach Bob has had its time
    assert bob_changes == [], bob_changes

    # --- broadcast and presence between two clients ---
    heard_by_alice, heard_by_bob = [], []
    room_a = await subscribed(a1.channel("room-1", {"config": {"broadcast": {"self": False, "ack": True}}})
                              .on_broadcast("wave", heard_by_alice.append)
                              .on_presence_sync(lambda: None))
    room_b = await subscribed(b.channel("room-1", {"config": {"broadcast": {"self": False}}})
                              .on_broadcast("wave", heard_by_bob.append)
                              .on_presence_sync(lambda: None))
    await room_a.send_broadcast("wave", {"from": "alice"})
    await until(lambda: heard_by_bob, "a broadcast")
    assert heard_by_bob[0]["payload"] == {"from": "alice"}, heard_by_bob
    await asyncio.sleep(0.3)
    assert heard_by_alice == [], heard_by_alice  # self: false

    await room_a.track({"device": "iphone"})
    await room_b.track({"device": "ipad"})
    await until(lambda: len(room_a.presence_state()) == 2 and len(room_b.presence_state()) == 2, "presence of both")
    await room_b.untrack()
    await until(lambda: len(room_a.presence_state()) == 1, "presence after untrack")

    # --- a refreshed token keeps delivering ---
    await a1.auth.refresh_session()
    await asyncio.sleep(0.3)
    before = len(alice_changes)
    await a2.table("user_favorites").insert({"user_id": alice_id, "quote_id": third}).execute()
    await until(lambda: len(alice_changes) > before, "an insert after the token was refreshed")

    # --- after sign-out, nothing more arrives ---
    await a1.auth.sign_out({"scope": "local"})
    await asyncio.sleep(0.5)
    before = len(alice_changes)
    await a2.table("user_favorites").delete().eq("user_id", alice_id).eq("quote_id", third).execute()
    await asyncio.sleep(1.0)
    assert len(alice_changes) == before, alice_changes[before:]

    for client in (a1, a2, b):
        await client.realtime.close()
    print("ALL OK")


asyncio.run(asyncio.wait_for(main(), 90))
