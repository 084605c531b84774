"""The official Python MCP SDK (`mcp` on PyPI) as a client of our MCP server:
the `mcp_server` example (the support tools), over stdio and over streamable
HTTP, full and read-only. Checks what an MCP client's user sees: the tools
listed with annotations derived from their effects, a good call with
structured content, a wrong argument type (an error result naming the
field), an unknown tool, and a Write tool hidden by a read-only view
(answered as an unknown name).

    python client.py PATH/TO/mcp_server

Prints one line per check and ends with `N passed, N failed`; exits non-zero
if any failed. Run by scripts/mcp_python/run.sh.
"""

import asyncio
import subprocess
import sys
import traceback

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

SERVER = sys.argv[1]
RESULTS: list[tuple[str, str | None]] = []


def text(result) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


async def check_full(session: ClientSession) -> None:
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert list(tools) == ["lookup_account", "issue_refund", "send_reply", "charge", "format_cents"], list(tools)
    lookup = tools["lookup_account"].annotations
    assert lookup.read_only_hint is True and lookup.destructive_hint is False, lookup
    assert lookup.idempotent_hint is True and lookup.open_world_hint is False, lookup
    refund = tools["issue_refund"].annotations
    assert refund.read_only_hint is False and refund.destructive_hint is True, refund
    assert refund.idempotent_hint is False, refund
    assert tools["lookup_account"].output_schema["type"] == "object"
    assert tools["format_cents"].output_schema is None

    good = await session.call_tool("lookup_account", {"id": "cust_12345"})
    assert not good.is_error, good
    assert good.structured_content == {
        "id": "cust_12345",
        "subscription_tier": "pro",
        "email": "ana@example.com",
        "last_charge_cents": 1299,
    }, good.structured_content

    cents = await session.call_tool("format_cents", {"cents": 1299})
    assert not cents.is_error and text(cents) == "$12.99", cents

    wrong = await session.call_tool("issue_refund", {"account_id": "cust_12345", "amount": "ten dollars"})
    assert wrong.is_error, wrong
    assert '$.amount: expected Int, found string "ten dollars"' in text(wrong), text(wrong)

    unknown = await session.call_tool("refund_customer", {"id": "cust_12345"})
    assert unknown.is_error, unknown
    assert "There is no tool named `refund_customer`" in text(unknown), text(unknown)


async def check_read_only(session: ClientSession) -> None:
    tools = [tool.name for tool in (await session.list_tools()).tools]
    assert tools == ["lookup_account", "format_cents"], tools
    # A tool the server does not list does not exist for its clients.
    hidden = await session.call_tool("issue_refund", {"account_id": "cust_12345", "amount": 100})
    assert hidden.is_error, hidden
    assert text(hidden) == (
        "There is no tool named `issue_refund`. Available tools: `lookup_account`, `format_cents`."
    ), text(hidden)


async def over_stdio(args: list[str], check) -> None:
    params = StdioServerParameters(command=SERVER, args=args)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "typed-tools-support", init.server_info
            await check(session)


async def over_http(args: list[str], check) -> None:
    process = subprocess.Popen(
        [SERVER, "--http", "127.0.0.1:0", *args], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        line = process.stderr.readline()
        assert line.startswith("listening on "), line
        url = line.removeprefix("listening on ").strip()
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await check(session)
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0, "the server stops cleanly on SIGTERM"


async def main() -> None:
    for name, run in [
        ("stdio: list, good call, wrong type, unknown tool", over_stdio([], check_full)),
        ("stdio: a read-only view hides a Write tool", over_stdio(["--read-only"], check_read_only)),
        ("http: list, good call, wrong type, unknown tool", over_http([], check_full)),
        ("http: a read-only view hides a Write tool", over_http(["--read-only"], check_read_only)),
    ]:
        try:
            await asyncio.wait_for(run, timeout=60)
            RESULTS.append((name, None))
            print(f"ok: {name}")
        except Exception:
            RESULTS.append((name, traceback.format_exc()))
            print(f"FAILED: {name}\n{traceback.format_exc()}")


asyncio.run(main())
failed = sum(1 for _, error in RESULTS if error)
print(f"{len(RESULTS) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
