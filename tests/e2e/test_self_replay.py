"""failgate on itself: its own first event, replayed over its own history.

The event in ledger/failgate/events/pinned-path-in-dot-git/ was recorded with
`failgate record` when the bug was fixed; its verifier imports events.py
from the checkout under test. The repair is the commit that added that
verifier; its parent still had the bug. The receipt of this replay is kept
in docs/receipts/.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import failgate, git

PROJECT = Path(__file__).resolve().parents[2]
ENTITY = "failgate:events:pinned-path-in-dot-git"
VERIFIER = "checks/pinned_paths_outside_git.py"


def test_failgate_s_own_gate_holds_at_the_parent_and_clears_at_the_repair() -> None:
    # CI runs on a full clone of main; a shallow one fails here loudly, never skips.
    assert git(PROJECT, "rev-parse", "--is-shallow-repository") == "false"
    added = git(PROJECT, "log", "--diff-filter=A", "--format=%H", "--", VERIFIER).splitlines()
    assert added, f"{VERIFIER} is not in this repository's history"
    repair = added[-1]
    result = failgate(
        PROJECT, "replay", f"{repair}^..{repair}", "--entity", ENTITY, "--direct", "--json"
    )
    assert result.code == 0, result
    report = json.loads(result.out)
    assert report["ok"] is True
    assert [s["state"] for s in report["steps"]] == ["held", "cleared"]
    assert report["repair"] == repair
    assert "failgate_hooks/events.py" in report["changed_files"]


def test_the_kept_receipt_names_the_same_interval() -> None:
    receipt = (PROJECT / "docs/receipts/failgate-events-pinned-path-in-dot-git.md").read_text()
    repair = git(PROJECT, "log", "--diff-filter=A", "--format=%H", "--", VERIFIER).splitlines()[-1]
    parent = git(PROJECT, "rev-parse", f"{repair}^")
    assert "REPLAY OK: held at parent, cleared at repair" in receipt
    assert repair in receipt and parent in receipt
