"""Pinned verifier files against a pushed commit that tries to route around them.

Each world has the gate on main, on a real bare remote. The server runs a real
`failgate-pre-receive --exec`; CI runs a real `failgate ci` on a fresh clone.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import os
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

from failgate_hooks.app import demo
from failgate_hooks.core.events import (
    Event,
    Status,
    Verification,
    entity_folder,
    event_to_toml,
)
from tests.conftest import Repo, make_repo
from tests.e2e.test_ci import pr_world, pull_request
from tests.e2e.test_pre_receive import RELAXERS, install_pre_receive, push, server
from tests.worlds import (
    KEY,
    budget_repo,
    fix_budget,
    record_failure,
    remote_ref,
    with_raw_mode,
    with_remote,
    with_slash_name,
)

GUTTED = "import sys\nsys.exit(0)\n"
HELD = "budget 50M < required 120M"


def restate_and_gut(repo: Repo) -> str:
    """A new event repeating the identical verification, and the pinned file emptied of
    its check: the restatement is no relaxation, the changed pinned file is one."""
    repo.record(
        KEY, "--status", "observed", "--verify", f"python3 {demo.CHECK_PATH}",
        "--verify-file", demo.CHECK_PATH, "--note", "still seen", "--no-probe",
    )  # fmt: skip
    repo.write(demo.CHECK_PATH, GUTTED)
    return repo.commit("restate the gas budget verifier")


def test_a_restated_verification_cannot_re_pin_on_the_server(tmp_path: Path) -> None:
    repo, remote = server(tmp_path, "--exec")
    before = remote_ref(remote, "refs/heads/main")
    restate_and_gut(repo)
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert HELD in refused.stderr
    assert "RELAXED" not in refused.stderr
    [pending] = [line for line in refused.stderr.splitlines() if "PENDING" in line]
    assert f"pinned file {demo.CHECK_PATH} differs" in pending  # the file, not the event
    assert remote_ref(remote, "refs/heads/main") == before


def test_a_restated_verification_cannot_re_pin_in_ci(tmp_path: Path) -> None:
    repo = pr_world(tmp_path)
    restate_and_gut(repo)
    result = pull_request(repo, tmp_path)
    assert result.code == 1, result
    [error] = result.annotations("error")
    assert HELD in error
    [warning] = result.annotations("warning")  # the file, not the event
    assert f"RELAXED pinned file {demo.CHECK_PATH} differs" in warning


def recorded_id(repo: Repo) -> str:
    [event] = (repo.path / "ledger").rglob("*.toml")
    return event.stem


def test_a_restatement_beside_the_reviewed_event_cannot_re_pin_by_its_id(tmp_path: Path) -> None:
    """An event that follows nothing is ordered among its peers by id, which the pusher
    writes: one whose id sorts first is still not what introduced the verification."""
    repo = pr_world(tmp_path)
    reviewed = recorded_id(repo)
    early = Event(
        id="20000101T000000Z-00000000",
        entity_key=KEY,
        status=Status.OBSERVED,
        effective_at=dt.datetime(2000, 1, 1, tzinfo=dt.UTC),
        title=demo.TITLE,
        triggers=("push",),
        verification=Verification(command=("python3", demo.CHECK_PATH), files=(demo.CHECK_PATH,)),
    )
    assert early.id < reviewed
    folder = f"ledger/{entity_folder(KEY)}"
    repo.write(f"{folder}/{early.id}.toml", event_to_toml(early).decode())
    repo.write(demo.CHECK_PATH, GUTTED)
    repo.commit("an event that sorts before the reviewed one")
    result = pull_request(repo, tmp_path)
    assert result.code == 1, result
    assert HELD in result.annotations("error")[0]


def test_superseding_the_reviewed_event_with_the_same_verification_cannot_re_pin(
    tmp_path: Path,
) -> None:
    repo = pr_world(tmp_path)
    repo.record(KEY, "--status", "observed", "--supersedes", recorded_id(repo), "--no-probe")
    repo.write(demo.CHECK_PATH, GUTTED)
    repo.commit("supersede the event, its keys carried forward")
    result = pull_request(repo, tmp_path)
    assert result.code == 1, result
    assert HELD in result.annotations("error")[0]


# --------------------------------------------------------------------------- shadowing

CHECK = """\
import sys
import helper
sys.exit(0 if helper.budget_covers() else 1)
"""
HELPER = """\
import json
def budget_covers():
    config = json.load(open("deploy/budget.json"))
    required = config["modules"] * 20_000_000
    print(f"budget {config['gas_budget'] // 10**6}M < required {required // 10**6}M")
    return config["gas_budget"] >= required
"""
LENIENT = "def budget_covers():\n    return True\n"


def record_helper_failure(repo: Repo) -> None:
    """The failure, its verifier `import helper` with checks/helper.py pinned."""
    repo.write("checks/check.py", CHECK)
    repo.write("checks/helper.py", HELPER)
    repo.commit("a verifier and its helper")
    repo.record(
        KEY, "--status", "observed", "--title", demo.TITLE, "--trigger", "push",
        "--verify", f"{sys.executable} checks/check.py", "--verify-file", "checks/check.py",
        "--verify-file", "checks/helper.py", "--no-probe",
    )  # fmt: skip
    repo.commit("record the gas budget failure")


def helper_server(tmp_path: Path) -> tuple[Repo, Path]:
    repo = budget_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    record_helper_failure(repo)
    assert push(repo, "main").returncode == 0  # no server hook yet
    install_pre_receive(remote, "--exec")
    return repo, remote


def helper_pr(tmp_path: Path) -> Repo:
    repo = budget_repo(tmp_path / "work")
    record_helper_failure(repo)
    with_remote(repo, tmp_path / "remote.git")
    repo.git("switch", "-q", "-c", "feature")
    return repo


def shadow_with_a_package(repo: Repo) -> str:
    repo.write("checks/helper/__init__.py", LENIENT)
    repo.commit("a helper package beside the pinned helper module")
    return "checks/helper/__init__.py"


def shadow_with_bytecode(repo: Repo, tmp_path: Path) -> str:
    """A compiled lenient helper under __pycache__: an unchecked-hash .pyc is used
    without looking at the source beside it."""
    source = tmp_path / "lenient.py"
    source.write_text(LENIENT)
    cached = importlib.util.cache_from_source("checks/helper.py")
    (repo.path / cached).parent.mkdir(parents=True, exist_ok=True)
    py_compile.compile(
        str(source), cfile=str(repo.path / cached), doraise=True,
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
    )  # fmt: skip
    repo.commit("a compiled helper")
    return cached


def test_the_helper_world_holds_and_its_fix_clears(tmp_path: Path) -> None:
    repo, remote = helper_server(tmp_path)
    repo.write("notes.txt", "more work on the broken budget\n")
    repo.commit("more work")
    refused = push(repo, "main")
    assert refused.returncode != 0 and HELD in refused.stderr, refused.stderr
    fixed = fix_budget(repo)
    accepted = push(repo, "main")
    assert accepted.returncode == 0, accepted.stderr
    assert remote_ref(remote, "refs/heads/main") == fixed


@pytest.mark.parametrize("shadow", ["package", "bytecode"])
def test_an_unpinned_shadow_of_a_pinned_module_is_refused_on_the_server(
    tmp_path: Path, shadow: str
) -> None:
    repo, remote = helper_server(tmp_path)
    before = remote_ref(remote, "refs/heads/main")
    if shadow == "package":
        path = shadow_with_a_package(repo)
    else:
        path = shadow_with_bytecode(repo, tmp_path)
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert "gave no verdict" in refused.stderr
    assert f"{path} is not pinned and shadows checks/helper.py" in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before


@pytest.mark.parametrize("shadow", ["package", "bytecode"])
def test_an_unpinned_shadow_of_a_pinned_module_is_refused_in_ci(
    tmp_path: Path, shadow: str
) -> None:
    repo = helper_pr(tmp_path)
    fix_budget(repo)  # cleared, but for the shadow
    if shadow == "package":
        path = shadow_with_a_package(repo)
    else:
        path = shadow_with_bytecode(repo, tmp_path)
    result = pull_request(repo, tmp_path)
    assert result.code == 1, result
    [error] = result.annotations("error")
    assert "gave no verdict" in error
    assert f"{path} is not pinned and shadows checks/helper.py" in error


# --------------------------------------------------------------------------- two pushes


def land_a_gutted_check_then_break(
    repo: Repo, branch: str
) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str], str]:
    """Push 1: the budget fixed, and the pinned file gutted in the same commit; the
    reviewed copy clears it, the fix being real. Push 2: the failure back."""
    fix_budget(repo)
    repo.write(demo.CHECK_PATH, GUTTED)
    repo.commit("size the budget, and simplify the check")
    first = push(repo, branch)
    repo.write(demo.BUDGET_PATH, demo.budget_json(demo.BROKEN_BUDGET))
    broken = repo.commit("the budget for two and a half modules again")
    second = push(repo, branch)
    return first, second, broken


def test_a_pinned_file_gutted_on_main_beside_a_fix_cannot_clear_a_later_failure(
    tmp_path: Path,
) -> None:
    """Bob is no relaxer: an expiry he pushes is PENDING. Gutting the pinned verifier
    file weakens the gate as much, and must not land unreviewed either: else the
    next push clears the failure with his copy, pinned from main's new tip."""
    repo, remote = server(tmp_path, "--exec")
    first, second, broken = land_a_gutted_check_then_break(repo, "main")
    assert remote_ref(remote, "refs/heads/main") != broken, second.stderr
    refused = first if first.returncode != 0 else second
    assert refused.returncode != 0
    assert "PENDING" in refused.stderr or HELD in refused.stderr, refused.stderr


def test_a_protected_branch_made_by_an_earlier_push_cannot_pin_the_verifier(
    tmp_path: Path,
) -> None:
    """The same on a release branch push 1 creates (release/** is protected by default):
    its old tip is read as a protected revision, and its copy of the pinned file, never
    reviewed, is what the second push ran with."""
    repo, remote = server(tmp_path, "--exec")
    branch = "release/1.0"
    repo.git("switch", "-q", "-c", branch)
    first, second, broken = land_a_gutted_check_then_break(repo, branch)
    assert remote_ref(remote, f"refs/heads/{branch}") != broken, second.stderr
    refused = first if first.returncode != 0 else second
    assert refused.returncode != 0
    assert "PENDING" in refused.stderr or HELD in refused.stderr, refused.stderr


def test_a_relaxer_may_push_a_changed_pinned_file(tmp_path: Path) -> None:
    """The reviewed way to change a pinned file on the server: a relaxer pushes it, and
    the change is listed; from then on main's new copy is the pinned one."""
    repo, remote = server(tmp_path, "--exec")
    fix_budget(repo)
    repo.write(demo.CHECK_PATH, demo.CHECK_SCRIPT + "# reviewed: same check\n")
    changed = repo.commit("size the budget; a comment in the check")
    accepted = push(repo, "main", user="alice")
    assert accepted.returncode == 0, accepted.stderr
    assert f"RELAXED pinned file {demo.CHECK_PATH} differs" in accepted.stderr
    assert remote_ref(remote, "refs/heads/main") == changed
    repo.write("notes.txt", "more\n")
    after = repo.commit("more work")
    plain = push(repo, "main")
    assert plain.returncode == 0, plain.stderr
    assert "RELAXED" not in plain.stderr and "PENDING" not in plain.stderr
    assert remote_ref(remote, "refs/heads/main") == after


def test_an_unpinned_neighbour_cannot_stand_in_for_a_module_a_pinned_script_imports(
    tmp_path: Path,
) -> None:
    """The pinned check imports json; Python looks in the script's own folder first, so a
    checks/json.py the commit adds is what it loads, and the reviewed check never reads
    the budget. The demo, the README and `record` pin the one file, not its folder."""
    repo, remote = server(tmp_path, "--exec")
    before = remote_ref(remote, "refs/heads/main")
    repo.write(
        "checks/json.py", 'def load(handle):\n    return {"modules": 1, "gas_budget": 10**9}\n'
    )
    repo.commit("a json beside the check")
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert "gave no verdict" in refused.stderr
    assert "checks/json.py is not pinned, and " in (refused.stderr)
    assert remote_ref(remote, "refs/heads/main") == before


# Reviewed code that prefers a faster parser when one is installed, as much code does.
PREFERS_SIMPLEJSON = demo.CHECK_SCRIPT.replace(
    "import json\n",
    "try:\n    import simplejson as json\nexcept ImportError:\n    import json\n",
)

LENIENT_SIMPLEJSON = 'def load(handle):\n    return {"modules": 1, "gas_budget": 10**9}\n'


def simplejson_server(tmp_path: Path, *record: str) -> tuple[Repo, Path]:
    """As `server`, the reviewed check taking simplejson where it is installed."""
    command = f"python3 {demo.CHECK_PATH}"
    return server_with_check_at(tmp_path, demo.CHECK_PATH, command, PREFERS_SIMPLEJSON, *record)


def test_a_module_name_beside_a_pinned_script_is_pinned_whatever_its_name(
    tmp_path: Path,
) -> None:
    """Not only the standard library's names: the script's folder comes first for every
    import, also one of a module the verifier's Python lacks, or has installed. The
    reviewed check takes simplejson when it can; a checks/simplejson.py the commit adds
    is what it would load."""
    repo, remote = simplejson_server(tmp_path)
    before = remote_ref(remote, "refs/heads/main")
    repo.write("checks/simplejson.py", LENIENT_SIMPLEJSON)
    broken = repo.commit("a simplejson beside the check")
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert "checks/simplejson.py is not pinned" in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before != broken


@pytest.mark.parametrize("how", ["folder 40755", "link 120644"])
def test_a_module_beside_a_pinned_script_under_a_raw_tree_mode_is_still_judged(
    tmp_path: Path, how: str
) -> None:
    """Git checks out an entry of mode 40755 as a folder and one of 120644 as a link
    (it reads every mode by its kind), but failgate's tree reader calls anything not
    exactly 040000 or 160000 a blob: a checks/simplejson package under such a mode
    is no module to the shadowing judgement, and is what the reviewed check loads."""
    repo, remote = simplejson_server(tmp_path)
    before = remote_ref(remote, "refs/heads/main")
    if how.startswith("folder"):
        repo.write("checks/simplejson/__init__.py", LENIENT_SIMPLEJSON)
        repo.commit("a simplejson package beside the check")
        broken = with_raw_mode(repo, "checks/simplejson", "40755")
    else:
        repo.write("vendor/simplejson/__init__.py", LENIENT_SIMPLEJSON)
        os.symlink("../vendor/simplejson", repo.path / "checks/simplejson")
        repo.commit("a link to a simplejson package beside the check")
        broken = with_raw_mode(repo, "checks/simplejson", "120644")
    refused = push(repo, "main")
    assert remote_ref(remote, "refs/heads/main") == before != broken, refused.stderr
    assert refused.returncode != 0
    assert "checks/simplejson" in refused.stderr and "is not pinned" in refused.stderr


def test_a_module_beside_a_pinned_script_cannot_land_where_its_gate_does_not_apply(
    tmp_path: Path,
) -> None:
    """The gate applies to release branches. A checks/simplejson.py pushed to main, where
    the gate does not apply, would be what main's tip offers beside the pinned script:
    a later push of the broken budget to a release branch would load it, never
    reviewed. So adding it is a relaxation whatever the gate's state, as a change to
    the pinned file is: only a relaxer may push it to a protected branch."""
    repo, remote = simplejson_server(tmp_path, "--ref", "refs/heads/release/*")
    before = remote_ref(remote, "refs/heads/main")
    repo.write("checks/simplejson.py", LENIENT_SIMPLEJSON)
    added = repo.commit("a simplejson beside the check")
    first = push(repo, "main")
    assert first.returncode != 0, first.stderr
    assert "PENDING checks/simplejson.py is not pinned" in first.stderr
    assert remote_ref(remote, "refs/heads/main") == before != added
    second = push(repo, "HEAD:refs/heads/release/1.0")
    assert second.returncode != 0, second.stderr
    assert remote_ref(remote, "refs/heads/release/1.0") is None
    assert push(repo, "main", user="alice").returncode == 0  # a relaxer reviewed it
    assert remote_ref(remote, "refs/heads/main") == added


def test_a_module_beside_a_pinned_script_under_a_slashed_root_name_is_still_judged(
    tmp_path: Path,
) -> None:
    """A root tree entry named `checks/json.py` is, to git's read-tree, the file
    checks/json.py of the checkout, beside the pinned check, which then imports it for
    `json`. failgate reads checks/ through the folder entry only, so the rule never
    sees it, and the broken budget is accepted."""
    repo, remote = server(tmp_path, "--exec")
    before = remote_ref(remote, "refs/heads/main")
    lenient = b'def load(handle):\n    return {"modules": 1, "gas_budget": 10**9}\n'
    repo.write("notes.txt", "more work on the broken budget\n")
    repo.commit("more work")
    pushed = with_slash_name(repo, "checks/json.py", lenient)
    assert "checks/json.py" in repo.git("ls-tree", "--name-only", pushed).splitlines()
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before != pushed


def calendar_server(tmp_path: Path, command: str, *record: str) -> tuple[Repo, Path]:
    """As `server`, with the project's own, reviewed calendar/ app at the root (named as
    the standard library's calendar) and the gate's verifier `command`."""
    repo = budget_repo(tmp_path / "work")
    repo.write("failgate.toml", RELAXERS)
    repo.write("calendar/__init__.py", "")  # the project's own app
    repo.write("calendar/views.py", "SLOTS = 3\n")
    repo.commit("who may relax gates, and the project's calendar app")
    remote = with_remote(repo, tmp_path / "remote.git")
    repo.record(
        KEY, "--status", "observed", "--title", demo.TITLE, "--trigger", "push",
        "--verify", command, "--verify-file", demo.CHECK_PATH, "--no-probe", *record,
    )  # fmt: skip
    repo.commit("record the gas budget failure")
    assert push(repo, "main").returncode == 0  # no server hook yet
    install_pre_receive(remote, "--exec")
    return repo, remote


def test_a_shell_verifier_is_not_refused_for_a_reviewed_root_module_python_never_sees(
    tmp_path: Path,
) -> None:
    """`record` asks for `sh -c '…'` when a command needs a shell operator. The check
    runs as `python3 checks/…py`: its folder is first on sys.path, never the root. The
    rule now takes any program's `-c` for `python -c`, so the project's own, reviewed
    root calendar/ package "shadows the standard library's calendar": the fix gets no verdict,
    and every push, the fix too, is a pinned-files relaxation only a relaxer may push."""
    repo, remote = calendar_server(tmp_path, f"sh -c 'python3 {demo.CHECK_PATH} && echo checked'")
    fixed = fix_budget(repo)
    accepted = push(repo, "main")
    assert accepted.returncode == 0, accepted.stderr
    assert remote_ref(remote, "refs/heads/main") == fixed


# --------------------------------------------------------------------------- PATH


def test_a_relative_path_entry_cannot_run_the_commits_own_interpreter(tmp_path: Path) -> None:
    """A PATH entry that is empty or relative (`bin`, `node_modules/.bin`) is looked up in
    the verifier's working folder, the checkout: `python3` would then be whatever file
    the commit puts there, and the reviewed, pinned check would never run."""
    repo, remote = server(tmp_path, "--exec")
    before = remote_ref(remote, "refs/heads/main")
    repo.write("tools/python3", "#!/bin/sh\nexit 0\n")
    (repo.path / "tools" / "python3").chmod(0o755)
    repo.commit("an interpreter of our own")
    env = {**os.environ, "REMOTE_USER": "bob", "PATH": f"tools{os.pathsep}{os.environ['PATH']}"}
    refused = subprocess.run(
        ["git", "push", "--no-verify", "origin", "main"], cwd=repo.path, capture_output=True,
        text=True, check=False, env=env, timeout=300,
    )  # fmt: skip
    assert refused.returncode != 0, refused.stderr
    assert HELD in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before


# --------------------------------------------------------------------------- the pass cache


def test_the_verifier_cannot_read_the_ledger_through_a_link(tmp_path: Path) -> None:
    """The content key leaves the ledger folder out, so the verifier is given the commit
    without it: a link from deploy/budget.json into it finds nothing, and no change
    there can reach a verdict the key would let stand for another commit."""
    repo, remote = server(tmp_path, "--exec")
    before = remote_ref(remote, "refs/heads/main")
    (repo.path / demo.BUDGET_PATH).unlink()
    (repo.path / demo.BUDGET_PATH).symlink_to("../ledger/.budget.json")
    repo.write("ledger/.budget.json", demo.budget_json(demo.FIXED_BUDGET))
    kept = repo.commit("the budget, kept beside the ledger")
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert "OPEN deploy:mainnet:gas-budget" in refused.stderr, refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before != kept


def test_an_event_path_behind_a_link_cannot_carry_a_pass_to_another_commit(
    tmp_path: Path,
) -> None:
    """Two commits that differ only in the ledger share a content key. With
    deploy/budget.json a link to an event path, the first holds the fixed budget there
    and the second a valid event: had the verifier read the first, its pass would clear
    the second, whose budget it cannot even read."""
    repo, remote = server(tmp_path, "--exec")
    base = repo.head()
    event = repo.record(
        "ops:scratch", "--status", "observed", "--title", "a note", "--trigger", "push",
        "--ref", "refs/heads/nowhere", "--note", "scratch", "--no-probe",
    )  # fmt: skip
    valid = (repo.path / event).read_text()
    depth = "../" * demo.BUDGET_PATH.count("/")
    (repo.path / demo.BUDGET_PATH).unlink()
    (repo.path / demo.BUDGET_PATH).symlink_to(depth + event)
    (repo.path / event).write_text(demo.budget_json(demo.FIXED_BUDGET))  # no TOML: no event
    repo.commit("the budget, kept where the ledger is")
    first = push(repo, "main")
    assert first.returncode != 0, first.stderr
    assert "CLEARED deploy:mainnet:gas-budget" not in first.stderr, first.stderr
    repo.git("switch", "-q", "-c", "again", base)
    (repo.path / demo.BUDGET_PATH).unlink()
    (repo.path / demo.BUDGET_PATH).symlink_to(depth + event)
    repo.write(event, valid)
    second = repo.commit("a valid event where the budget was")
    refused = push(repo, "again:main")
    assert refused.returncode != 0, refused.stderr
    assert "OPEN deploy:mainnet:gas-budget" in refused.stderr, refused.stderr
    assert remote_ref(remote, "refs/heads/main") not in (second,)


# A verifier that skips its check for one branch, as one might to spare a feature branch
# the wait: it could, while failgate told it the ref.
SKIPS_FEATURE = demo.CHECK_SCRIPT.replace(
    "import json\nimport sys\n",
    "import json\nimport os\nimport sys\n\n"
    'print("ref:", os.environ.get("FAILGATE_REF", "not told"))\n'
    'if os.environ.get("FAILGATE_REF") == "refs/heads/feature":\n'
    '    print("a feature branch: nothing to check")\n    sys.exit(0)\n',
)


def test_a_verifier_is_not_told_the_ref_so_a_pass_elsewhere_cannot_clear_main(
    tmp_path: Path,
) -> None:
    """A pass stands for content on every ref: the server's pass cache and one run per
    commit share it between refs. While the verifier was told the ref, a pass it gave
    without checking on a feature branch cleared the same commit on main. Now it is not
    told, and one that still reads the ref has no verdict anywhere."""
    repo = budget_repo(tmp_path / "work")
    repo.write(demo.CHECK_PATH, SKIPS_FEATURE)
    repo.commit("the check, skipped on the feature branch")
    remote = with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "push")
    assert push(repo, "main").returncode == 0  # no server hook yet
    install_pre_receive(remote, "--exec")
    before = remote_ref(remote, "refs/heads/main")
    repo.write("notes.txt", "more work on the broken budget\n")
    broken = repo.commit("more work")
    elsewhere = push(repo, "HEAD:refs/heads/feature")
    assert elsewhere.returncode == 0, elsewhere.stderr  # a feature branch only warns
    no_longer = "names FAILGATE_REF or FAILGATE_TRIGGER, which failgate no longer sets"
    assert no_longer in elsewhere.stderr
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert no_longer in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before != broken


# --------------------------------------------------------------------------- review: gaps left


def server_with_check_at(
    tmp_path: Path, check_path: str, command: str, script: str = demo.CHECK_SCRIPT, *record: str
) -> tuple[Repo, Path]:
    """As `server`, but the gate's verifier is `command`, pinning the one file `check_path`
    that holds `script`; `record`: more arguments for the event."""
    repo = budget_repo(tmp_path / "work")
    repo.write(check_path, script)
    repo.write("failgate.toml", RELAXERS)
    repo.commit("the check where the team keeps its scripts; who may relax gates")
    remote = with_remote(repo, tmp_path / "remote.git")
    repo.record(
        KEY, "--status", "observed", "--title", demo.TITLE, "--trigger", "push",
        "--verify", command, "--verify-file", check_path,
        "--note", "six modules, budget sized for two and a half", "--no-probe", *record,
    )  # fmt: skip
    repo.commit("record the gas budget failure")
    assert push(repo, "main").returncode == 0  # no server hook yet
    install_pre_receive(remote, "--exec")
    return repo, remote


def test_a_standard_library_name_beside_a_pinned_script_without_a_py_suffix_is_refused(
    tmp_path: Path,
) -> None:
    """`python3 checks/check-gas-budget` runs the pinned script as `python3 checks/x.py`
    would: Python puts checks/ first on sys.path, so the commit's checks/json.py is what
    `import json` loads. The standard-library rule looked only beside pinned `*.py`."""
    repo, remote = server_with_check_at(
        tmp_path, "checks/check-gas-budget", "python3 checks/check-gas-budget"
    )
    before = remote_ref(remote, "refs/heads/main")
    repo.write(
        "checks/json.py", 'def load(handle):\n    return {"modules": 1, "gas_budget": 10**9}\n'
    )
    broken = repo.commit("a json beside the check")
    refused = push(repo, "main")
    assert remote_ref(remote, "refs/heads/main") == before != broken, refused.stderr
    assert "checks/json.py is not pinned, and " in (refused.stderr)


def test_a_pinned_file_main_lost_cannot_be_restored_unreviewed(tmp_path: Path) -> None:
    """Main lost the release gate's pinned check (alice, a relaxer, moved it away), so
    the gate cannot start anywhere. Bob, no relaxer, pushes to main his own file at the
    pinned path, where the gate does not apply: the pin comparison skips a gate whose
    protected copy is missing, so nothing lists it. Once his commit is main's tip its
    copy is the pinned one, and a push to a release branch clears the broken budget."""
    repo, remote = server(tmp_path, "--exec", record=("--ref", "refs/heads/release/*"))
    repo.git("rm", "-q", demo.CHECK_PATH)
    repo.commit("move the checks out (the gate's file with them)")
    moved = push(repo, "main", user="alice")
    assert moved.returncode == 0, moved.stderr
    assert "RELAXED pinned file" in moved.stderr  # losing the file is listed
    repo.write(demo.CHECK_PATH, GUTTED)
    gutted = repo.commit("bring the gas budget check back")
    restored = push(repo, "main")
    if restored.returncode == 0:  # what that opens: the release gate clears on his copy
        released = push(repo, "main:refs/heads/release/1.0")
        assert released.returncode != 0, released.stderr
    assert restored.returncode != 0, restored.stderr
    assert "PENDING" in restored.stderr
    assert remote_ref(remote, "refs/heads/main") != gutted


def test_an_input_that_links_outside_the_inputs_keys_its_target(tmp_path: Path) -> None:
    """With `inputs`, a pass is keyed by the files the globs match. A deploy/budget.json
    that links to data/budget.json is keyed by the link's text: push 1 passes with a
    fixed budget there, push 2 breaks the budget behind the link under the same key,
    and the cached pass clears it without a run."""
    repo, remote = server(tmp_path, "--exec", record=("--input", "deploy/*.json"))
    (repo.path / demo.BUDGET_PATH).unlink()
    (repo.path / demo.BUDGET_PATH).symlink_to("../data/budget.json")
    repo.write("data/budget.json", demo.budget_json(demo.FIXED_BUDGET))
    fixed = repo.commit("the budget kept under data/")
    first = push(repo, "main")
    assert first.returncode == 0, first.stderr
    assert remote_ref(remote, "refs/heads/main") == fixed
    repo.write("data/budget.json", demo.budget_json(demo.BROKEN_BUDGET))
    broken = repo.commit("the budget for two and a half modules again")
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert HELD in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == fixed != broken


# --------------------------------------------------------------------------- review 3


def test_python_m_in_a_strict_shell_string_cannot_clear_the_budget_on_the_server(
    tmp_path: Path,
) -> None:
    """`bash -o pipefail -c '…'` is how strict CI scripts run a command. The rule reads a
    shell's string only when the shell is the word just before `-c`, so the
    `python3 -m checks.check_gas_budget` in it is never seen: a checks/__init__.py the
    commit adds, which Python imports before the pinned check and which ends the
    process with 0, lands the broken budget on main."""
    module = demo.CHECK_PATH.removesuffix(".py").replace("/", ".")
    command = f"bash -o pipefail -c 'python3 -m {module}'"
    repo, remote = server_with_check_at(tmp_path, demo.CHECK_PATH, command)
    before = remote_ref(remote, "refs/heads/main")
    repo.write("checks/__init__.py", "import os\nos._exit(0)\n")
    broken = repo.commit("the checks folder becomes a package")
    refused = push(repo, "main")
    assert remote_ref(remote, "refs/heads/main") == before != broken, refused.stderr
    assert refused.returncode != 0


def test_a_ci_workflow_folder_beside_a_root_script_is_no_module_to_refuse(
    tmp_path: Path,
) -> None:
    """A team keeps its check at the repository's root (`python3 check_gas_budget.py`),
    fixes the budget, then adds a GitHub workflow. .github/ holds a folder, so the rule
    takes it for a namespace portion of a new name beside the pinned script, though no
    import can name it (a module name holds no dot): the push is a PENDING pinned-files
    relaxation, and every later push that adds a top-level folder would be too."""
    repo, remote = server_with_check_at(
        tmp_path, "check_gas_budget.py", "python3 check_gas_budget.py"
    )
    fixed = fix_budget(repo)
    accepted = push(repo, "main")
    assert accepted.returncode == 0, accepted.stderr
    assert remote_ref(remote, "refs/heads/main") == fixed
    repo.write(".github/workflows/ci.yml", "on: push\njobs: {}\n")
    workflow = repo.commit("run the tests on every push")
    plain = push(repo, "main")
    assert plain.returncode == 0, plain.stderr
    assert "PENDING" not in plain.stderr
    assert remote_ref(remote, "refs/heads/main") == workflow


def test_a_module_added_beside_a_pinned_path_main_lost_is_a_relaxation_too(
    tmp_path: Path,
) -> None:
    """Main lost the release gate's pinned check (alice moved it). While the pins cannot
    be taken, the pin comparison looks at the pinned paths only, never at what lands
    beside them: bob's checks/json.py reaches main unlisted. When alice brings the
    reviewed check back, her push lists the file she restored, and json.py, now main's,
    is what was reviewed: bob's broken budget then clears the release gate."""
    repo, remote = server(tmp_path, "--exec", record=("--ref", "refs/heads/release/*"))
    repo.git("rm", "-q", demo.CHECK_PATH)
    repo.commit("move the checks out (the gate's file with them)")
    assert push(repo, "main", user="alice").returncode == 0
    repo.write(
        "checks/json.py", 'def load(handle):\n    return {"modules": 1, "gas_budget": 10**9}\n'
    )
    added = repo.commit("a json helper for the checks folder")
    beside = push(repo, "main")
    if beside.returncode == 0:  # what that opens, once the reviewed check is back
        repo.write(demo.CHECK_PATH, demo.CHECK_SCRIPT)
        repo.commit("bring the reviewed gas budget check back")
        back = push(repo, "main", user="alice")
        assert back.returncode == 0, back.stderr
        assert "checks/json.py" not in back.stderr  # alice is shown her own file only
        repo.write("notes.txt", "release the broken budget\n")
        repo.commit("release notes")
        released = push(repo, "HEAD:refs/heads/release/1.0")
        assert released.returncode != 0, released.stderr
    assert beside.returncode != 0, beside.stderr
    assert "PENDING" in beside.stderr
    assert remote_ref(remote, "refs/heads/main") != added


def test_main_s_own_tip_pushed_to_a_release_branch_keeps_its_reviewed_root_package(
    tmp_path: Path,
) -> None:
    """The project's own, reviewed calendar/ app sits at the root and the check runs as
    `python3 -m checks.check_gas_budget`. A commit on top of main keeps it (main's tip,
    where the pins come from, offered it), but main's tip itself pushed to a release
    branch is its own pinned-from revision: then nothing counts as reviewed, and the
    app "shadows the standard library's calendar". The ordinary release push, a fast
    forward to what main holds, gets no verdict."""
    module = demo.CHECK_PATH.removesuffix(".py").replace("/", ".")
    repo, remote = calendar_server(
        tmp_path, f"python3 -m {module}", "--ref", "refs/heads/release/*"
    )
    fixed = fix_budget(repo)
    assert push(repo, "main").returncode == 0  # the gate does not apply on main
    released = push(repo, "main:refs/heads/release/1.0")
    assert released.returncode == 0, released.stderr
    assert remote_ref(remote, "refs/heads/release/1.0") == fixed


# --------------------------------------------------------------------------- the runner


DEPLOY_TEST = """\
import deploy


def test_the_budget_covers_six_modules():
    assert deploy.BUDGET >= 120
"""


def pytest_server(tmp_path: Path, *files: tuple[str, str]) -> tuple[Repo, Path]:
    """A remote whose main holds a gate run as `python -m pytest` on its pinned test of
    the project's deploy.py, short of budget, and `files`; the hook installed with --exec
    (sandboxed). The Python is the one that runs these tests: it has pytest installed."""
    repo = make_repo(tmp_path / "work")
    for path, text in files:
        repo.write(path, text)
    repo.write("deploy.py", "BUDGET = 50\n")
    repo.write("tests/test_deploy.py", DEPLOY_TEST)
    repo.write("failgate.toml", RELAXERS)
    repo.commit("a deploy, its test, who may relax gates")
    remote = with_remote(repo, tmp_path / "remote.git")
    command = f"{sys.executable} -m pytest -q -p no:cacheprovider tests/test_deploy.py"
    repo.record(
        KEY, "--status", "observed", "--title", "the budget is short", "--trigger", "push",
        "--verify", command, "--verify-file", "tests/test_deploy.py", "--no-probe",
    )  # fmt: skip
    repo.commit("record the failure")
    assert push(repo, "main").returncode == 0  # no server hook yet
    install_pre_receive(remote, "--exec")
    return repo, remote


def test_the_runner_world_holds_and_its_fix_with_a_new_package_of_its_own_clears(
    tmp_path: Path,
) -> None:
    """`python -m pytest` puts the checkout's root first on sys.path: that is how the
    test imports the project under test, so a new root package of the project's own
    (mypkg/, named like nothing installed) lands with the fix."""
    repo, remote = pytest_server(tmp_path)
    before = remote_ref(remote, "refs/heads/main")
    repo.write("notes.txt", "more work on the short budget\n")
    repo.commit("more work")
    held = push(repo, "main")
    assert held.returncode != 0, held.stderr
    assert "assert 50 >= 120" in held.stderr
    assert remote_ref(remote, "refs/heads/main") == before
    repo.write("deploy.py", "BUDGET = 120\n")
    repo.write("mypkg/__init__.py", "from deploy import BUDGET\n")
    fixed = repo.commit("size the budget; a package of the project's own at the root")
    cleared = push(repo, "main")
    assert cleared.returncode == 0, cleared.stderr
    assert remote_ref(remote, "refs/heads/main") == fixed


def test_a_root_module_named_like_the_runner_s_own_cannot_make_pytest_pass(
    tmp_path: Path,
) -> None:
    """pytest imports pluggy as it starts; under `python -m pytest` a root pluggy.py the
    commit adds is that import, and ends the run with 0 before any test. It is no
    standard library name: the installed packages' names are judged at the root too."""
    repo, remote = pytest_server(tmp_path)
    before = remote_ref(remote, "refs/heads/main")
    repo.write("pluggy.py", "import os\nos._exit(0)\n")
    broken = repo.commit("a pluggy of the commit's own")
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert "pluggy.py is not pinned, and " in refused.stderr
    assert "no module `pluggy` in the checkout's root folder" in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before != broken


def test_package_metadata_at_the_root_cannot_start_a_pytest_plugin(tmp_path: Path) -> None:
    """importlib.metadata reads every sys.path folder's `*.dist-info`, the root too under
    `python -m pytest`: a root evil.dist-info whose entry_points.txt names a pytest11
    plugin is loaded as pytest starts, and the plugin (a root module of no installed
    name, so no shadow of one) ends the run with 0."""
    repo, remote = pytest_server(tmp_path)
    before = remote_ref(remote, "refs/heads/main")
    repo.write("evil.dist-info/METADATA", "Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n")
    repo.write("evil.dist-info/entry_points.txt", "[pytest11]\nevil = evil_plugin\n")
    repo.write("evil_plugin.py", "import os\n\n\ndef pytest_configure(config):\n    os._exit(0)\n")
    broken = repo.commit("a plugin pytest finds by its metadata")
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert "evil.dist-info is not pinned, and " in refused.stderr
    assert "importlib.metadata reads it from every sys.path folder" in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before != broken


def test_pytest_settings_of_the_commit_s_own_cannot_load_a_plugin_that_passes_the_test(
    tmp_path: Path,
) -> None:
    """pytest reads its settings from the checkout: a pytest.ini of `addopts = -p
    evil_plugin` loads the commit's root evil_plugin.py (no installed name, so no
    shadow of one), which sets the exit status to 0 over the failing pinned test."""
    repo, remote = pytest_server(tmp_path)
    before = remote_ref(remote, "refs/heads/main")
    repo.write("pytest.ini", "[pytest]\naddopts = -p evil_plugin\n")
    repo.write(
        "evil_plugin.py",
        "import pytest\n\n\n@pytest.hookimpl(trylast=True)\n"
        "def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n",
    )
    broken = repo.commit("a plugin by pytest's settings")
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert "pytest.ini is not pinned, and it gives pytest settings where " in refused.stderr
    assert "pin it too in the verifier's files" in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before != broken


PYPROJECT = """\
[project]
name = "deploy"
version = "1.0"
dependencies = []

[tool.pytest.ini_options]
addopts = "-ra"
"""


def test_a_fix_that_changes_only_pyproject_s_dependencies_beside_it_lands(
    tmp_path: Path,
) -> None:
    """Only pyproject's pytest tables are pytest's settings: a fix that also adds a
    dependency to [project] runs under the reviewed settings and lands."""
    repo, remote = pytest_server(tmp_path, ("pyproject.toml", PYPROJECT))
    repo.write("deploy.py", "BUDGET = 120\n")
    repo.write("pyproject.toml", PYPROJECT.replace("[]", '["requests>=2"]'))
    fixed = repo.commit("size the budget; a dependency")
    cleared = push(repo, "main")
    assert cleared.returncode == 0, cleared.stderr
    assert remote_ref(remote, "refs/heads/main") == fixed
