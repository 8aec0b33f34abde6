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


HOSTILE = "\\u001b[2J\\r\\u001b]0;owned\\u0007"  # TOML escapes: clear screen, CR, a title


def test_an_error_the_tools_answer_with_is_cleaned_and_bounded(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    # a configuration key failgate does not know, which its error names back
    repo.write("failgate.toml", f'"{HOSTILE}{"q" * (1 << 19)}" = 1\n')  # under the file bound
    repo.commit("a hostile configuration")
    _, answers = talk(repo.path, [("held_gates", {}), ("export_ledger", {})])
    for answer in answers:
        assert not answer.is_error, answer
        error = answer.structured_content["error"]
        assert "failgate.toml" in error and "unknown key" in error, error[:200]
        assert not any(c in error for c in "\x1b\r\x07"), error[:200]
        assert len(error) < 2_000, len(error)


def test_a_hostile_ledger_reaches_the_agent_as_clean_data(tmp_path: Path) -> None:
    from failgate_hooks.core.events import entity_folder

    repo = budget_repo(tmp_path / "work")
    path = record_failure(repo, "push")
    event = repo.path / path
    event.write_text(event.read_text().replace('title = "', f'title = "{HOSTILE}'))
    folder = repo.path / "ledger" / entity_folder(KEY)
    (folder / "20261130T030000Z-0000beef.toml").write_text("not = [toml\r\x1b[2J" + "z" * (1 << 20))
    repo.commit("an escape in a title, and a megabyte that is not TOML")
    _, (held,) = talk(repo.path, [("held_gates", {})])
    assert not held.is_error, held
    text = held.content[0].text  # what the agent reads, decoded from the JSON
    document = held.structured_content
    assert [g["entity_key"] for g in document["held"]] == [KEY]  # the gate still holds
    for shown in (str(document), text):
        assert not any(c in shown for c in "\x1b\r\x07"), shown[:300]
    assert len(text) < 20_000, len(text)
