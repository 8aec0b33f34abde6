"""`failgate demo`: the README's first command tells the whole story, for real."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import failgate


def test_demo_refuses_then_allows_then_replays_and_leaves_nothing(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    # offline: no proxy could be reached even if something tried
    env = {
        "TMPDIR": str(scratch),
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
    }
    result = failgate(tmp_path, "demo", env=env)
    assert result.code == 0, result
    out = result.out
    blocked, ok, replay = (
        out.index("BLOCKED"),
        out.index("OK: all gates cleared"),
        out.index("REPLAY OK"),
    )
    assert blocked < ok < replay
    assert "budget 50M < required 120M" in out
    assert "== 4. Push: refused while the gate is held ==" in out
    assert list(scratch.iterdir()) == []  # the throwaway repositories are gone
