"""A small MCP server written with the official Python SDK (`mcp` on PyPI):
a weather desk with a forecast (read-only, open world), a notebook (writes,
closed world), and `calls_seen`, which says which calls reached the server.

tests/mcp_python.rs imports its tools with our client (over stdio) and checks
that bad calls are refused before they get here. Run by scripts/mcp_python/run.sh.
"""

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import BaseModel

server = MCPServer("weather-desk")

# Every call that reached a tool, in order.
CALLS: list[dict] = []


class Forecast(BaseModel):
    """A day's forecast for a city."""

    city: str
    celsius: int
    summary: str


class Note(BaseModel):
    """A saved note."""

    id: int
    text: str


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=True))
def forecast(city: str, days: int = 1) -> Forecast:
    """The forecast for a city, `days` ahead."""
    CALLS.append({"tool": "forecast", "city": city, "days": days})
    return Forecast(city=city, celsius=21 + days, summary=f"sunny in {city}")


@server.tool(
    annotations=ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
    )
)
def save_note(city: str, text: str) -> Note:
    """Save a note about a city."""
    CALLS.append({"tool": "save_note", "city": city, "text": text})
    return Note(id=len(CALLS), text=f"{city}: {text}")


@server.tool()
def calls_seen() -> list[dict]:
    """The calls that reached this server, in order."""
    return list(CALLS)


if __name__ == "__main__":
    server.run("stdio")
