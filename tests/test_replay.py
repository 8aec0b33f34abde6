"""Historical replay on real repositories, and once on a real project's history.

The real history is tomli's fix of lower case "t" and "z" in datetimes, released
as tomli 1.2.3 on 2021-12-13. tests/data/tomli.bundle holds two commits that are
RECONSTRUCTED, not cloned: this machine reaches PyPI but not tomli's git host, so
tests/data/reconstruct_tomli_bundle.py committed the LICENSE and tomli/ package
of the PyPI sdists tomli-1.2.2.tar.gz and tomli-1.2.3.tar.gz byte for byte (their
sha256 checked against PyPI's), with the sdists' PKG-INFO author and PyPI upload
times as author and date. The code and the fix are tomli's own; the commits,
their ids and their messages are ours. tests/data/README.md says the same.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from failgate_hooks import __version__
from failgate_hooks.app import demo
from failgate_hooks.app.replay import replay
from failgate_hooks.core import exitcodes
from failgate_hooks.core.errors import UsageError
from failgate_hooks.core.replay import ReplayReport, ReplayStep, StepState
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.render.replay import (
    OK_VERDICT,
    render_receipt,
    render_replay_json,
    render_replay_text,
)
from tests.conftest import Repo, git, make_repo
from tests.worlds import fix_budget, record_failure

KEY = demo.ENTITY
DATA = Path(__file__).parent / "data"
REPAIRER = "Grace Repairer <grace@example.org>"  # not the author of the other commits


@dataclass(frozen=True)
class History:
    """Four commits: the failure, a change beside it, the repair, then the ledger's event."""

    repo: Repo
    parent: str
    middle: str
    repair: str
    ledger: str

    @property
    def interval(self) -> str:
        return f"{self.parent}..{self.repair}"


def budget_history(
    path: Path, object_format: str = "sha1", *, repaired_budget: int = demo.FIXED_BUDGET
) -> History:
    """The budget story as history: the verifier and its event arrive only after the repair."""
    repo = make_repo(path, object_format)
    repo.write(demo.BUDGET_PATH, demo.budget_json(demo.BROKEN_BUDGET))
    parent = repo.commit("six modules on a budget for two and a half")
    repo.write("README", "a project, deployed to mainnet\n")
    middle = repo.commit("say where it deploys")
    repo.write(demo.BUDGET_PATH, demo.budget_json(repaired_budget))
    repo.git("add", "-A")
    repo.git("commit", "-q", "--author", REPAIRER, "-m", "size the budget for six modules")
    repair = repo.head()
    repo.write(demo.CHECK_PATH, demo.CHECK_SCRIPT)
    record_failure(repo, "push")
    return History(repo, parent, middle, repair, repo.head())


def run_replay(repo: Repo, interval: str, key: str = KEY, **options: object) -> ReplayReport:
    with GitRepo.open(repo.path) as opened:
        return replay(opened, interval, key, **options)  # type: ignore[arg-type]


def usage_error(repo: Repo, interval: str, key: str = KEY, **options: object) -> str:
    """The message of the UsageError the replay raises, which the CLI turns into exit 2."""
    with pytest.raises(UsageError) as caught:
        run_replay(repo, interval, key, **options)
    assert caught.value.exit_code == exitcodes.USAGE
    return caught.value.message


@pytest.fixture(params=["sha1", "sha256"])
def history(request: pytest.FixtureRequest, tmp_path: Path) -> History:
    return budget_history(tmp_path / "repo", request.param)


def has_file(repo: Repo, commit: str, path: str) -> bool:
    return repo.git("ls-tree", "--name-only", commit, "--", path) == path


# --------------------------------------------------------------------------- the proof


def test_the_gate_holds_at_the_parent_and_clears_at_the_repair(history: History) -> None:
    assert not has_file(history.repo, history.repair, demo.CHECK_PATH)  # history predates it
    seen: list[tuple[int, int, str]] = []
    report = run_replay(
        history.repo,
        history.interval,
        progress=lambda i, n, commit: seen.append((i, n, commit)),
    )
    chain = [history.parent, history.middle, history.repair]
    assert [s.commit for s in report.steps] == chain
    assert [s.state for s in report.steps] == [StepState.HELD, StepState.HELD, StepState.CLEARED]
    assert [s.exit_code for s in report.steps] == [1, 1, 0]
    assert report.ok and report.reason is None
    assert seen == [(1, 3, chain[0]), (2, 3, chain[1]), (3, 3, chain[2])]
    assert report.ledger_rev == history.ledger
    assert report.author == REPAIRER
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", report.date)
    assert report.changed_files == ("README", demo.BUDGET_PATH)
    assert report.command == ("python3", demo.CHECK_PATH)


def test_the_text_has_one_line_per_commit_oldest_first(history: History) -> None:
    lines = render_replay_text(run_replay(history.repo, history.interval)).splitlines()
    assert lines[0].startswith(f"REPLAY {KEY} over {history.parent[:12]}..{history.repair[:12]}")
    step = r"(\S+)  (HELD|CLEARED|NO VERDICT)  exit (\S+) in \d+\.\d\d s  (.*)"
    found = [re.fullmatch(step, line) for line in lines[1:4]]
    assert [m.groups() if m else None for m in found] == [
        (history.parent[:12], "HELD", "1", "six modules on a budget for two and a half"),
        (history.middle[:12], "HELD", "1", "say where it deploys"),
        (history.repair[:12], "CLEARED", "0", "size the budget for six modules"),
    ]
    assert lines[4].startswith(f"repair: {REPAIRER} ")
    assert lines[5] == f"changed: README, {demo.BUDGET_PATH}"
    assert lines[6] == OK_VERDICT == "REPLAY OK: held at parent, cleared at repair"
    assert len(lines) == 7


def test_the_json_carries_every_field(history: History) -> None:
    doc = json.loads(render_replay_json(run_replay(history.repo, history.interval)))
    assert doc["ok"] is True
    assert (doc["parent"], doc["repair"], doc["ledger_rev"]) == (
        history.parent,
        history.repair,
        history.ledger,
    )
    assert doc["entity_key"] == KEY
    assert doc["command"] == ["python3", demo.CHECK_PATH]
    assert [(s["commit"], s["state"], s["exit_code"]) for s in doc["steps"]] == [
        (history.parent, "held", 1),
        (history.middle, "held", 1),
        (history.repair, "cleared", 0),
    ]
    assert all(isinstance(s["duration_s"], float) and s["subject"] for s in doc["steps"])
    assert doc["changed_files"] == ["README", demo.BUDGET_PATH]
    assert doc["author"] == REPAIRER
    assert doc["date"] and doc["reason"] is None


def test_the_pinned_verifier_comes_from_the_ledger_rev_not_from_head(history: History) -> None:
    repo = history.repo
    repo.write(demo.CHECK_PATH, "print('all good')\n")
    repo.commit("make the check pass, the easy way")
    assert not run_replay(repo, history.interval).ok  # HEAD's gutted copy passes everywhere
    report = run_replay(repo, history.interval, ledger_rev=history.ledger)
    assert report.ok, report.reasons
    assert report.ledger_rev == history.ledger


def test_a_repair_that_does_not_repair_fails(tmp_path: Path) -> None:
    history = budget_history(tmp_path / "repo", repaired_budget=100_000_000)
    report = run_replay(history.repo, history.interval)
    assert not report.ok
    assert report.steps[-1].state is StepState.HELD
    assert report.reasons == (
        f"still held at the repair {history.repair[:12]} (exit 1): the repair does not repair",
    )
    assert render_replay_text(report).splitlines()[-1] == f"REPLAY FAILED: {report.reason}"
    assert json.loads(render_replay_json(report))["ok"] is False


def test_a_verifier_that_passes_at_the_parent_proves_nothing(history: History) -> None:
    report = run_replay(history.repo, f"{history.repair}..{history.ledger}")
    assert not report.ok
    assert report.reasons[0].startswith(f"cleared at the parent {history.repair[:12]}")


# --------------------------------------------------------------------------- the interval


def test_a_parent_that_is_not_an_ancestor_is_a_usage_error(history: History) -> None:
    message = usage_error(history.repo, f"{history.repair}..{history.parent}")
    assert f"PARENT {history.repair[:12]} is not an ancestor of REPAIR" in message


def test_a_parent_off_the_first_parent_chain_is_a_usage_error(history: History) -> None:
    repo = history.repo
    repo.git("checkout", "-q", "-b", "side", history.parent)
    repo.write("side.txt", "work on a side branch\n")
    side = repo.commit("side work")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "-m", "merge side", "side")
    merge = repo.head()
    message = usage_error(repo, f"{side}..{merge}")
    assert f"PARENT {side[:12]} is not on REPAIR {merge[:12]}'s first-parent chain" in message
    # the merge's own first-parent chain is fine
    report = run_replay(repo, f"{history.repair}..{merge}", ledger_rev=history.ledger)
    assert [s.commit for s in report.steps] == [history.repair, history.ledger, merge]


def test_direct_on_a_two_step_interval_is_a_usage_error(history: History) -> None:
    message = usage_error(history.repo, history.interval, direct=True)
    assert message == (
        f"--direct: the first parent of REPAIR {history.repair[:12]} is "
        f"{history.middle[:12]}, not PARENT {history.parent[:12]}"
    )
    report = run_replay(history.repo, f"{history.middle}..{history.repair}", direct=True)
    assert [s.commit for s in report.steps] == [history.middle, history.repair]
    assert report.ok


@pytest.mark.parametrize(
    "interval", ["", "HEAD", "..HEAD", "HEAD..", "HEAD~1...HEAD", "nope..HEAD", "HEAD..HEAD"]
)
def test_a_malformed_interval_is_a_usage_error(history: History, interval: str) -> None:
    usage_error(history.repo, interval)


# --------------------------------------------------------------------------- the entity


def test_an_unknown_entity_is_a_usage_error(history: History) -> None:
    message = usage_error(history.repo, history.interval, "deploy:testnet:gas-budget")
    assert message.startswith("no entity deploy:testnet:gas-budget in the ledger at HEAD")
    usage_error(history.repo, history.interval, "Not A Key")


def test_the_event_is_read_from_the_ledger_rev_only(history: History) -> None:
    message = usage_error(history.repo, history.interval, ledger_rev=history.repair)
    assert message.startswith(f"no entity {KEY} in the ledger at {history.repair}")


def test_an_entity_without_a_verifier_is_a_usage_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    parent = repo.head()
    repair = repo.commit("a repair")
    repo.record(KEY, "--status", "observed", "--title", demo.TITLE, "--trigger", "push")
    repo.commit("record it")
    assert "has no verifier" in usage_error(repo, f"{parent}..{repair}")


def test_a_trigger_the_entity_is_not_checked_for_is_a_usage_error(history: History) -> None:
    message = usage_error(history.repo, history.interval, trigger="deploy")
    assert message == f'{KEY} is not checked for "deploy" (its triggers: push)'


def test_scope_is_not_applied_to_history(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.write(demo.BUDGET_PATH, demo.budget_json(demo.BROKEN_BUDGET))
    parent = repo.commit("broken")
    repair = fix_budget(repo)
    repo.write(demo.CHECK_PATH, demo.CHECK_SCRIPT)
    # since the ledger commit itself, and paths that no historical commit has
    record_failure(repo, "push", "--since", repair, "--path", "checks/**", "--ref", "refs/heads/x")
    report = run_replay(repo, f"{parent}..{repair}")
    assert [s.state for s in report.steps] == [StepState.HELD, StepState.CLEARED]


# --------------------------------------------------------------------------- expected files


def test_expect_files_that_differ_fail_the_replay(history: History) -> None:
    report = run_replay(history.repo, history.interval, expect_files=[demo.BUDGET_PATH])
    assert not report.ok
    assert report.reasons == (
        "the changed files differ from --expect-files (changed but not expected: README)",
    )
    report = run_replay(
        history.repo, history.interval, expect_files=[demo.BUDGET_PATH, "README", "x.txt"]
    )
    assert "expected but not changed: x.txt" in (report.reason or "")
    same = run_replay(history.repo, history.interval, expect_files=["README", demo.BUDGET_PATH])
    assert same.ok


# --------------------------------------------------------------------------- no verdict


def test_exit_125_at_the_parent_is_no_verdict_and_fails_the_replay(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    parent = repo.commit("no budget file yet: the verifier cannot judge")
    repo.write(demo.BUDGET_PATH, demo.budget_json(demo.BROKEN_BUDGET))
    repo.commit("a budget for two and a half")
    repair = fix_budget(repo)
    repo.write(demo.CHECK_PATH, demo.CHECK_SCRIPT)
    record_failure(repo, "push")
    report = run_replay(repo, f"{parent}..{repair}")
    first = report.steps[0]
    assert (first.state, first.exit_code) == (StepState.NO_VERDICT, 125)
    assert first.detail == "the verifier could not judge: its set-up failed"
    assert [s.state for s in report.steps[1:]] == [StepState.HELD, StepState.CLEARED]
    assert not report.ok
    assert report.reason == (
        f"no verdict at the parent {parent[:12]} (the verifier could not judge: its set-up "
        "failed): a gate held for the wrong reason proves nothing"
    )
    text = render_replay_text(report).splitlines()
    assert re.fullmatch(rf"{parent[:12]}  NO VERDICT  exit 125 in \S+ s  no budget .*", text[1])
    assert json.loads(render_replay_json(report))["steps"][0]["state"] == "no_verdict"
    # one step later the parent is held for the right reason, and the proof stands
    assert run_replay(repo, f"{report.steps[1].commit}..{repair}").ok


def test_a_command_that_cannot_start_is_no_verdict_everywhere(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    parent = repo.head()
    repair = repo.commit("a repair")
    repo.record(KEY, "--status", "observed", "--title", demo.TITLE, "--trigger", "push",
                "--verify", "no-such-verifier-anywhere --check", "--no-probe", "--force")  # fmt: skip
    repo.commit("record it")
    report = run_replay(repo, f"{parent}..{repair}")
    assert [(s.state, s.exit_code) for s in report.steps] == [(StepState.NO_VERDICT, None)] * 2
    assert "cannot start 'no-such-verifier-anywhere'" in report.steps[0].detail
    assert len(report.reasons) == 2
    assert report.reasons[1].startswith(f"no verdict at the repair {repair[:12]} (cannot start")
    lines = render_replay_text(report).splitlines()
    assert all("  NO VERDICT  exit - in " in line for line in lines[1:3])
    doc = json.loads(render_replay_json(report))
    assert [s["exit_code"] for s in doc["steps"]] == [None, None]


SLOW_WHEN_FIXED = """\
import json, sys, time
budget = json.load(open("deploy/budget.json"))["gas_budget"]
if budget >= 120_000_000:
    time.sleep(60)
sys.exit(1)
"""


def test_a_timeout_at_the_repair_is_no_verdict(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.write(demo.BUDGET_PATH, demo.budget_json(demo.BROKEN_BUDGET))
    parent = repo.commit("broken")
    repair = fix_budget(repo)
    repo.write("checks/slow.py", SLOW_WHEN_FIXED)
    repo.record(KEY, "--status", "observed", "--title", demo.TITLE, "--trigger", "push",
                "--verify", "python3 checks/slow.py", "--verify-file", "checks/slow.py",
                "--timeout", "3", "--no-probe")  # fmt: skip
    repo.commit("record it")
    report = run_replay(repo, f"{parent}..{repair}")
    last = report.steps[-1]
    assert (last.state, last.exit_code, last.detail) == (
        StepState.NO_VERDICT,
        None,
        "timed out after 3 s",
    )
    assert report.reasons == (f"no verdict at the repair {repair[:12]} (timed out after 3 s)",)
    assert "  NO VERDICT  exit - in 3.00 s  " in render_replay_text(report)


def test_no_verdict_between_the_ends_does_not_fail_the_replay(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.write(demo.BUDGET_PATH, demo.budget_json(demo.BROKEN_BUDGET))
    parent = repo.commit("broken")
    repo.git("rm", "-q", demo.BUDGET_PATH)
    repo.commit("the budget file is gone for a while")
    repair = fix_budget(repo)
    repo.write(demo.CHECK_PATH, demo.CHECK_SCRIPT)
    record_failure(repo, "push")
    report = run_replay(repo, f"{parent}..{repair}")
    assert [s.state for s in report.steps] == [
        StepState.HELD,
        StepState.NO_VERDICT,
        StepState.CLEARED,
    ]
    assert report.ok


# --------------------------------------------------------------------------- what is left behind

# The budget check, after making README immutable in its checkout, as a verifier run as
# root can: the next step, whose commit changes README, cannot move that checkout.
LOCKS_README = """\
import runpy, subprocess
subprocess.run(["chattr", "+i", "README"], check=True)
runpy.run_path("checks/check_gas_budget.py", run_name="__main__")
"""


def test_a_checkout_replay_cannot_remove_is_a_warning_on_standard_error(
    tmp_path: Path, immutable_files: None
) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.write(demo.BUDGET_PATH, demo.budget_json(demo.BROKEN_BUDGET))
    parent = repo.commit("broken")
    repo.write("README", "a project, deployed to mainnet\n")
    repo.commit("say where it deploys")
    repair = fix_budget(repo)
    repo.write(demo.CHECK_PATH, demo.CHECK_SCRIPT)
    repo.write("checks/locks_readme.py", LOCKS_README)
    repo.record(KEY, "--status", "observed", "--title", demo.TITLE, "--trigger", "push",
                "--verify", "python3 checks/locks_readme.py",
                "--verify-file", "checks/locks_readme.py", "--verify-file", demo.CHECK_PATH,
                "--no-probe")  # fmt: skip
    repo.commit("record it")
    result = repo.failgate("replay", f"{parent}..{repair}", "--entity", KEY)
    assert result.code == 0, result  # the proof stands: the step ran in a fresh checkout
    # one line for each checkout the locked README kept from being moved or removed
    warnings = [line for line in result.err.splitlines() if "could not remove" in line]
    assert warnings, result
    for warning in warnings:
        assert warning.startswith("failgate: warning: could not remove "), result
        assert warning.endswith("(a verifier may have made a file immutable: chattr -R -i)")


# --------------------------------------------------------------------------- the receipt


def test_the_receipt_holds_both_full_ids_and_the_ledger_revision(history: History) -> None:
    report = run_replay(history.repo, history.interval)
    receipt = render_receipt(report)
    for full in (history.parent, history.middle, history.repair, history.ledger):
        assert f"`{full}`" in receipt
    assert f"| ledger revision | `{history.ledger}` (named `HEAD`) |" in receipt
    assert f'`["python3", "{demo.CHECK_PATH}"]`' in receipt
    assert f"| failgate version | `{__version__}` |" in receipt
    assert "**REPLAY OK: held at parent, cleared at repair**" in receipt
    assert f"| repair author | `{REPAIRER}` |" in receipt
    assert f"- `{demo.BUDGET_PATH}`" in receipt
    assert "budget 50M < required 120M" in receipt  # what the verifier said at the parent
    assert f"| `{history.parent}` | HELD | 1 |" in receipt


HOSTILE = "fix \x1b]0;pwned\x07\x1b[2J\u202eevil\u202c | <script>x</script> *`code`* [a](b)"


def test_hostile_text_in_a_commit_never_reaches_the_output_raw(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.write(demo.BUDGET_PATH, demo.budget_json(demo.BROKEN_BUDGET))
    parent = repo.commit("broken")
    repo.write(demo.BUDGET_PATH, demo.budget_json(demo.FIXED_BUDGET))
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", HOSTILE, "--author", "Eve \x1b[31mRed\x1b[0m <eve@example.org>")
    repair = repo.head()
    repo.write(demo.CHECK_PATH, demo.CHECK_SCRIPT + 'print("\\x1b[2J```\\n| x |")\n')
    record_failure(repo, "push")
    report = run_replay(repo, f"{parent}..{repair}")
    assert report.ok
    assert "\x1b" in report.steps[-1].subject and "\x1b" in report.author  # the data, as is
    outputs = [render_replay_text(report), render_replay_json(report), render_receipt(report)]
    for out in outputs:
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", out)
        assert "pwned" not in out
    text, _doc, receipt = outputs
    assert "Eve Red <eve@example.org>" in text
    assert "<script>" not in receipt
    assert "\\<script\\>" in receipt
    # every row of the steps table keeps its five cells: a pipe in data is escaped
    rows = [line for line in receipt.splitlines() if line.startswith(("| `", "| commit"))]
    assert len(rows) == 3
    assert all(len(re.findall(r"(?<!\\)\|", row)) == 6 for row in rows)
    # the verifier's output cannot close the fence around it
    fence = re.search(r"^(`{3,})text$", receipt.split("at the repair")[1], re.M)
    assert fence is not None and len(fence.group(1)) > 3


def test_rendering_sanitises_every_field() -> None:
    bad = "\x1b[31mred\x1b[0m\u202e|`\n"
    step = ReplayStep(bad, bad, StepState.NO_VERDICT, None, 0.0, detail=bad, output_tail=bad)
    report = ReplayReport(
        entity_key=bad, title=bad, trigger=bad, parent=bad, repair=bad, ledger_rev=bad,
        ledger_rev_label=bad, command=(bad,), pinned=((bad, bad),), timeout_s=1,
        steps=(step, step), changed_files=(bad,), expect_files=(bad,), author=bad, date=bad,
        reasons=(bad,), failgate_version=bad,
    )  # fmt: skip
    for out in (render_replay_text(report), render_replay_json(report), render_receipt(report)):
        assert "\x1b" not in out and "\u202e" not in out
    assert len(render_replay_text(report).splitlines()) == 6  # no field breaks a line
    assert report._replace(reasons=()).ok


# --------------------------------------------------------------------------- real history

# tomli, reconstructed from its PyPI sdists (see the module docstring, tests/data/README.md).
TOMLI_1_2_2 = "c39705af993c703950235838f65d222a2f4d8cc0"
TOMLI_1_2_3 = "4cf3f714472f32c78c69920b10c17ae339e777c1"
TOMLI_KEY = "tomli:datetime:lowercase-t-z"
TOMLI_CHECK = "checks/check_tomli_datetime.py"


def test_replay_on_tomlis_real_fix_of_lower_case_datetimes(tmp_path: Path) -> None:
    git(tmp_path, "clone", "-q", str(DATA / "tomli.bundle"), "tomli")
    repo = Repo(tmp_path / "tomli")
    assert repo.git("rev-parse", "1.2.2^{commit}", "1.2.3^{commit}").split() == [
        TOMLI_1_2_2,
        TOMLI_1_2_3,
    ]
    assert repo.git("rev-parse", f"{TOMLI_1_2_3}^") == TOMLI_1_2_2
    # The event and its verifier arrive on top of the repair, as they would today.
    (repo.path / "checks").mkdir()
    shutil.copy(DATA / "check_tomli_datetime.py", repo.path / TOMLI_CHECK)
    repo.record(
        TOMLI_KEY, "--status", "observed", "--trigger", "push",
        "--title", 'tomli rejects lower case "t" and "z" in datetimes',
        "--verify", f"python3 {TOMLI_CHECK}", "--verify-file", TOMLI_CHECK, "--no-probe",
        "--note", "1979-05-27t07:32:00z is valid TOML (RFC 3339); tomli 1.2.2 rejects it",
    )  # fmt: skip
    ledger = repo.commit("record the lower case datetime failure")

    report = run_replay(
        repo, "1.2.2..1.2.3", TOMLI_KEY, ledger_rev=ledger, direct=True,
        expect_files=["tomli/__init__.py", "tomli/_re.py"],
    )  # fmt: skip
    assert [(s.commit, s.state) for s in report.steps] == [
        (TOMLI_1_2_2, StepState.HELD),
        (TOMLI_1_2_3, StepState.CLEARED),
    ]
    assert report.steps[0].exit_code == 1
    assert "tomli 1.2.2 rejects 'odt = 1979-05-27t07:32:00z'" in report.steps[0].output_tail
    assert "tomli 1.2.3 reads lower case t and z" in report.steps[1].output_tail
    assert report.ok, report.reasons
    assert report.author == "Taneli Hukkinen <hukkin@users.noreply.github.com>"
    assert report.date == "2021-12-13T22:25:06+00:00"
    assert report.changed_files == ("tomli/__init__.py", "tomli/_re.py")
    assert report.ledger_rev == ledger
    receipt = render_receipt(report)
    assert all(f"`{full}`" in receipt for full in (TOMLI_1_2_2, TOMLI_1_2_3, ledger))


def test_the_tomli_verifier_gives_no_verdict_without_tomli(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(DATA / "check_tomli_datetime.py")],
        cwd=tmp_path,
        env={"PATH": os.environ.get("PATH", ""), "PYTHONNOUSERSITE": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 125, proc
