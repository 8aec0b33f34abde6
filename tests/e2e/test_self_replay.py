"""failgate on itself: its own first event, replayed over its own history.

The event in ledger/failgate/events/pinned-path-in-dot-git/ was recorded with
`failgate record` when the bug was fixed; its verifier imports events.py
from the checkout under test. The repair is the commit that added that
verifier; its parent still had the bug. The receipt of this replay is kept
in docs/receipts/. The README shows the replay as a command to run: it runs here
as shown, in a fresh clone whose virtualenv has failgate installed editable, the
set-up in which a verifier importing a module old commits lack ran today's.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from tests.conftest import failgate, git
from tests.e2e.test_readme import BLOCKS, commands
from tests.venvs import (
    SUITE_SITE_PACKAGES,
    activated,
    install_editable_finder,
    make_venv,
    site_packages,
)

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


def test_the_readme_s_replay_of_failgate_s_own_gate_runs_as_shown_in_a_fresh_clone(
    tmp_path: Path,
) -> None:
    ((line, expected),) = commands(BLOCKS["self-replay"])
    assert git(PROJECT, "rev-parse", "--is-shallow-repository") == "false"
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(PROJECT), str(clone))
    venv = editable_venv(tmp_path / "venv", clone)
    env = activated(venv)
    # the set-up has teeth: in a checkout of an old commit, whose package has no `core`,
    # the venv's Python takes failgate_hooks.core from the clone's work tree
    old = tmp_path / "old"
    (old / "failgate_hooks").mkdir(parents=True)
    (old / "failgate_hooks" / "__init__.py").write_text("")
    found = subprocess.run(
        ["python3", "-c", "import failgate_hooks.core.events as m; print(m.__file__)"],
        cwd=old, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert found.stdout.strip() == str(clone / "failgate_hooks" / "core" / "events.py")
    result = subprocess.run(
        shlex.split(line), cwd=clone, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == expected, result.stdout + result.stderr
    steps = [row.split()[1] for row in result.stdout.splitlines() if row[:12] in line]
    assert steps == ["HELD", "CLEARED"], result.stdout
    assert "REPLAY OK: held at parent, cleared at repair" in result.stdout


def editable_venv(path: Path, clone: Path) -> Path:
    """A virtualenv as `make demo` leaves one in `clone`: failgate installed editable, a
    finder on sys.meta_path mapping its package to the clone's folder, and `failgate` in
    its bin. Its dependencies come from the suite's site-packages, named as a plain path,
    so the `.pth` files there (the suite's own editable install) are not run."""
    venv = make_venv(path)
    (site_packages(venv) / "suite-dependencies.pth").write_text(f"{SUITE_SITE_PACKAGES}\n")
    install_editable_finder(venv, "failgate_hooks", clone / "failgate_hooks")
    program = venv / "bin" / "failgate"
    program.write_text(
        f"#!{venv / 'bin' / 'python'}\n"
        "import sys\nfrom failgate_hooks.commands.cli import run\nsys.exit(run())\n"
    )
    program.chmod(0o755)
    return venv
