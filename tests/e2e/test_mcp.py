"""`failgate mcp` driven over stdio by the MCP client: read-only tools, the held gates as data."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.worlds import KEY, budget_repo, record_failure

# Nothing an agent is offered may relax a gate, trust a verifier or change a file.
RELAXING = ("record", "confirm", "expire", "trust", "install", "uninstall", "supersede", "retract")


def talk(cwd: Path, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[Any], list[Any]]:
    """The server's tools, and its answer to each call, in one stdio session."""

    async def session() -> tuple[list[Any], list[Any]]:
        server = StdioServerParameters(
            command=sys.executable, args=["-m", "failgate_hooks", "mcp"], cwd=str(cwd)
        )
        async with stdio_client(server) as streams, ClientSession(*streams) as client:
            await client.initialize()
            tools = (await client.list_tools()).tools
            answers = [await client.call_tool(name, arguments) for name, arguments in calls]
            return list(tools), answers

    return asyncio.run(asyncio.wait_for(session(), timeout=120))


def test_the_mcp_server_offers_read_only_tools_and_the_held_gates(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    head = repo.head()
    tools, (held, denied, plain, exported) = talk(
        repo.path,
        [
            ("held_gates", {}),
            ("check_command", {"command": "git push --no-verify origin main"}),
            ("check_command", {"command": "git push origin main"}),
            ("export_ledger", {}),
        ],
    )
    assert {t.name for t in tools} == {"held_gates", "check_command", "export_ledger"}
    for tool in tools:
        assert tool.annotations.read_only_hint is True, tool.name
        assert not any(word in tool.name for word in RELAXING), tool.name
    document = held.structured_content
    assert (document["kind"], document["schema_version"], document["commit"]) == (
        "failgate-agent-gates", 1, head,
    )  # fmt: skip
    assert [g["entity_key"] for g in document["held"]] == [KEY]
    assert document["held"][0]["verifier"]["try"] == f"failgate try {KEY}"
    assert denied.structured_content["decision"] == "deny"
    assert KEY in denied.structured_content["reason"]
    assert plain.structured_content == {"decision": "proceed"}
    assert exported.structured_content["kind"] == "failgate-export"
    assert not any(a.is_error for a in (held, denied, plain, exported))
    # the server read; it wrote nothing
    assert repo.git("status", "--porcelain") == ""
