"""`failgate ci` in a simulated GitHub Actions environment on real repositories.

Each run is a fresh interpreter with the variables the Actions runner sets, a
real event payload file and a real step summary file. Its output is read the
way the runner reads it: `workflow_commands` parses every line as the runner
would, honouring `::stop-commands::`, so a test sees exactly the commands a
job would act on.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
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
    new_event_id,
)
from tests.conftest import Repo, git
from tests.test_signing import make_key
from tests.worlds import budget_repo, fix_budget, record_failure, with_remote

KEY = demo.ENTITY
NULL = "0" * 40


def _ci_argv() -> list[str]:
    return [sys.executable, "-m", "failgate_hooks", "ci"]


def _unescape(text: str, *, property_value: bool = False) -> str:
    """What the Actions runner makes of an escaped value."""
    pairs = [("%0D", "\r"), ("%0A", "\n")]
    if property_value:
        pairs += [("%3A", ":"), ("%2C", ",")]
    for escaped, plain in [*pairs, ("%25", "%")]:
        text = text.replace(escaped, plain)
    return text


def workflow_commands(output: str) -> list[tuple[str, dict[str, str], str]]:
    """Every workflow command a runner would act on in `output`: (name, properties, data).

    Lines are trimmed first, as the runner does; Python's splitlines breaks at more
    characters than the runner's reader, so this sees at least every line it sees.
    """
    commands = []
    resume: str | None = None
    for raw in output.splitlines():
        line = raw.strip()
        if resume is not None:
            if line == f"::{resume}::":
                resume = None
            continue
        if not line.startswith("::"):
            continue
        end = line.find("::", 2)
        if end < 0:
            continue
        name, _, props_text = line[2:end].partition(" ")
        props = {}
        for item in filter(None, props_text.split(",")):
            key, _, value = item.partition("=")
            props[key] = _unescape(value, property_value=True)
        data = _unescape(line[end + 2 :])
        if name == "stop-commands":
            resume = data
        commands.append((name, props, data))
    return commands


class Ci:
    """One `failgate ci` run: exit code, output, the commands it gave, its step summary."""

    def __init__(self, proc: subprocess.CompletedProcess[str], summary: Path) -> None:
        self.code = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr
        self.summary = summary.read_text(encoding="utf-8") if summary.exists() else None

    @property
    def output(self) -> str:
        return self.out + self.err

    @property
    def commands(self) -> list[tuple[str, dict[str, str], str]]:
        return workflow_commands(self.out) + workflow_commands(self.err)

    def annotations(self, kind: str) -> list[str]:
        return [data for name, _, data in self.commands if name == kind]

    def __repr__(self) -> str:
        return f"<ci exit {self.code}\n--- stdout\n{self.out}\n--- stderr\n{self.err}>"


def run_ci(cwd: Path, tmp_path: Path, env: dict[str, str], *args: str) -> Ci:
    """`failgate ci` in `cwd` with only the CI variables given (none leak in from a real CI)."""
    summary = tmp_path / "step_summary.md"
    summary.unlink(missing_ok=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "FAILGATE_", "CI"))}
    proc = subprocess.run(
        [*_ci_argv(), *args], cwd=cwd, capture_output=True, text=True, check=False,
        env={**base, "GITHUB_STEP_SUMMARY": str(summary), **env}, timeout=300,
    )  # fmt: skip
    return Ci(proc, summary)


def ci_checkout(repo: Repo, tmp_path: Path) -> Path:
    """A fresh full clone of origin at the repository's HEAD, as actions/checkout makes it.

    Fresh, so nothing the developer's machine trusts or caches helps the run.
    """
    repo.git("push", "-q", "--no-verify", "--force", "origin", "HEAD:refs/ci/head")
    remote = repo.git("remote", "get-url", "origin")
    clone = tmp_path / "ci"
    if clone.exists():
        shutil.rmtree(clone)
    git(tmp_path, "clone", "-q", f"file://{remote}", str(clone))
    git(clone, "fetch", "-q", "origin", "+refs/ci/head:refs/ci/head")
    git(clone, "checkout", "-q", "--detach", "refs/ci/head")
    return clone


def github(
    tmp_path: Path, event_name: str, payload: dict[str, object], **env: str
) -> dict[str, str]:
    """The variables the Actions runner sets for one event, with its payload file."""
    event = tmp_path / "event.json"
    event.write_text(json.dumps(payload))
    return {
        "GITHUB_ACTIONS": "true",
        "CI": "true",
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event),
        **env,
    }


def pull_request(repo: Repo, tmp_path: Path, *args: str, base: str = "main") -> Ci:
    """`failgate ci` as a pull_request workflow of the current branch into `base` runs it."""
    base_sha = repo.git("rev-parse", f"refs/remotes/origin/{base}")
    payload = {
        "pull_request": {"number": 1, "base": {"ref": base, "sha": base_sha}},
        "repository": {"default_branch": "main"},
    }
    env = github(
        tmp_path, "pull_request", payload, GITHUB_BASE_REF=base, GITHUB_HEAD_REF="feature",
        GITHUB_REF="refs/pull/1/merge", GITHUB_SHA=repo.head(),
    )  # fmt: skip
    return run_ci(ci_checkout(repo, tmp_path), tmp_path, env, *args)


def pr_world(tmp_path: Path) -> Repo:
    """main holds the recorded failure and is on origin; the work goes on in a branch."""
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    with_remote(repo, tmp_path / "remote.git")
    repo.git("switch", "-q", "-c", "feature")
    return repo


def ours(command: tuple[str, dict[str, str], str]) -> bool:
    """A command failgate means to give: an annotation titled failgate, or its stop marker."""
    name, props, _ = command
    if name == "stop-commands":
        return not props
    return name in ("error", "warning") and props.get("title") == "failgate"


# --------------------------------------------------------------------------- shallow clones


def test_a_shallow_clone_is_refused_with_the_fix(tmp_path: Path) -> None:
    repo = pr_world(tmp_path)
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{tmp_path / 'remote.git'}", str(shallow))
    env = github(tmp_path, "pull_request", {}, GITHUB_BASE_REF="main", GITHUB_SHA=repo.head())
    result = run_ci(shallow, tmp_path, env)
    assert result.code == 4, result
    assert "shallow clone" in result.err
    assert "fetch-depth: 0" in result.err
    assert "git fetch --unshallow" in result.err
    [error] = result.annotations("error")
    assert "shallow clone" in error and "fetch-depth: 0" in error
    assert result.summary is not None and "could not decide" in result.summary


# --------------------------------------------------------------------------- pull requests


def test_a_held_gate_on_a_pull_request_into_main_fails_with_an_error_annotation(
    tmp_path: Path,
) -> None:
    repo = pr_world(tmp_path)
    repo.write("src/module7.txt", "a seventh module\n")
    repo.commit("add a module")
    result = pull_request(repo, tmp_path)
    assert result.code == 1, result
    [error] = result.annotations("error")
    assert error.startswith(f"OPEN {KEY} — {demo.TITLE}\n")
    assert "budget 50M < required 120M" in error
    assert not result.annotations("warning")
    assert "BLOCKED: 1 gate(s) still open" in result.out
    assert "CI github pull_request:" in result.out
    assert result.summary is not None
    assert f"| open (blocking) | {KEY} | {demo.TITLE} |" in result.summary
    assert "**BLOCKED: 1 gate(s) still open" in result.summary


def test_the_fix_in_the_pull_request_passes(tmp_path: Path) -> None:
    repo = pr_world(tmp_path)
    fix_budget(repo)
    result = pull_request(repo, tmp_path)
    assert result.code == 0, result
    assert f"CLEARED {KEY}" in result.out
    assert not result.annotations("error") and not result.annotations("warning")
    assert result.summary is not None and f"| cleared | {KEY} |" in result.summary


def test_an_event_recorded_on_main_after_the_branch_was_cut_still_holds_the_pull_request(
    tmp_path: Path,
) -> None:
    repo = budget_repo(tmp_path / "work")
    with_remote(repo, tmp_path / "remote.git")
    repo.git("switch", "-q", "-c", "feature")
    repo.write("src/module7.txt", "a seventh module\n")
    repo.commit("add a module")
    repo.git("switch", "-q", "main")
    record_failure(repo, "push")
    repo.git("push", "-q", "--no-verify", "origin", "main")
    repo.git("switch", "-q", "feature")
    result = pull_request(repo, tmp_path)
    assert result.code == 1, result
    [error] = result.annotations("error")
    assert error.startswith(f"OPEN {KEY}")
    # main moved on: its new event is not one the branch dropped
    assert "checked append-only from the merge base" in result.out
    assert not [line for line in result.out.splitlines() if line.startswith(("ERROR", "WARNING"))]


def test_a_relaxation_in_the_pull_request_is_one_warning_and_the_summary_lists_it(
    tmp_path: Path,
) -> None:
    repo = pr_world(tmp_path)
    expired = repo.failgate("expire", KEY, "--note", "the deploy tool sizes budgets now")
    assert expired.code == 0, expired
    event_id = Path(expired.out.strip().splitlines()[-1]).stem
    repo.commit("the risk is gone")
    result = pull_request(repo, tmp_path)
    assert result.code == 0, result
    assert not result.annotations("error")
    [warning] = result.annotations("warning")
    assert warning.startswith(f"RELAXED by {event_id} ({KEY}: status expired)")
    assert "review" in warning
    assert result.summary is not None
    assert "### Relaxations" in result.summary
    assert f"- RELAXED by {event_id} ({KEY}: status expired)" in result.summary
    assert f"| retired | {KEY} |" in result.summary


def test_a_signer_added_in_the_pull_request_is_a_relaxation_check_reports_too(
    tmp_path: Path,
) -> None:
    """Who may attest grows: the review is the authority, so it must be told, as the
    server's hook tells its pusher."""
    keys = tmp_path / "keys"
    keys.mkdir()
    _, team = make_key(keys, "team")
    _, other = make_key(keys, "other")
    repo = budget_repo(tmp_path / "work")
    repo.write("signers", f'team@example.org namespaces="failgate" {team}\n')
    repo.write("failgate.toml", 'evidence_signers = "signers"\n')
    repo.commit("the team may attest")
    with_remote(repo, tmp_path / "remote.git")
    repo.git("switch", "-q", "-c", "feature")
    with (repo.path / "signers").open("a") as signers:
        signers.write(f'evil@example.org namespaces="failgate" {other}\n')
    repo.commit("one more signer")
    relaxed = "evidence_signers file signers adds evil@example.org"
    result = pull_request(repo, tmp_path)
    assert [w for w in result.annotations("warning") if relaxed in w], result
    checked = repo.failgate("check", "--ref", "refs/heads/main")
    assert f"RELAXED config change at {repo.head()[:12]}: {relaxed}" in checked.out, checked


def test_an_event_edited_in_the_pull_request_fails_with_its_path(tmp_path: Path) -> None:
    repo = pr_world(tmp_path)
    fix_budget(repo)
    event = next((repo.path / "ledger").rglob("*.toml"))
    path = event.relative_to(repo.path).as_posix()
    event.write_text(event.read_text().replace("six modules", "seven modules"))
    repo.commit("reword the note in place")
    result = pull_request(repo, tmp_path)
    assert result.code == 4, result
    assert path in result.out
    files = [props.get("file") for name, props, _ in result.commands if name == "error"]
    assert path in files
    assert result.summary is not None and "### Errors" in result.summary


def test_an_event_deleted_in_the_pull_request_fails_with_its_path(tmp_path: Path) -> None:
    repo = pr_world(tmp_path)
    fix_budget(repo)
    event = next((repo.path / "ledger").rglob("*.toml"))
    path = event.relative_to(repo.path).as_posix()
    event.unlink()
    repo.commit("drop the event")
    result = pull_request(repo, tmp_path)
    assert result.code == 4, result
    assert path in result.out
    assert path in [props.get("file") for name, props, _ in result.commands if name == "error"]


def test_the_merge_commit_github_checks_out_is_decided_too(tmp_path: Path) -> None:
    repo = pr_world(tmp_path)
    fix_budget(repo)
    repo.git("switch", "-q", "main")
    repo.write("docs/notes.txt", "main moved on\n")
    repo.commit("main moves on")
    repo.git("push", "-q", "--no-verify", "origin", "main")
    # refs/pull/1/merge: the branch merged into the base as it is now
    repo.git("switch", "-q", "--detach", "origin/main")
    repo.git("merge", "-q", "--no-ff", "-m", "Merge feature into main", "feature")
    result = pull_request(repo, tmp_path)
    assert result.code == 0, result
    assert f"CLEARED {KEY}" in result.out


def test_configuration_comes_from_the_base_not_the_pull_request(tmp_path: Path) -> None:
    repo = pr_world(tmp_path)
    repo.write("failgate.toml", 'mode = "warn"\n')
    repo.commit("switch failgate to warn mode")
    result = pull_request(repo, tmp_path)
    assert result.code == 1, result
    assert [e for e in result.annotations("error") if e.startswith(f"OPEN {KEY}")]


def test_a_pull_request_into_a_release_branch_set_to_warn_is_held_to_main_s_mode(
    tmp_path: Path,
) -> None:
    """The base, release/1, carries mode = "warn"; main enforces. The base's configuration
    is held to no laxer than main's, as the hooks hold a push to release/1."""
    repo = budget_repo(tmp_path / "work")
    with_remote(repo, tmp_path / "remote.git")
    repo.git("switch", "-q", "-c", "release/1")
    repo.write("failgate.toml", 'mode = "warn"\n')
    repo.commit("release/1 only warns")
    record_failure(repo, "push")
    repo.git("push", "-q", "--no-verify", "origin", "release/1")
    repo.git("switch", "-q", "-c", "feature")
    repo.write("src/module7.txt", "a seventh module\n")
    repo.commit("add a module")
    result = pull_request(repo, tmp_path, base="release/1")
    assert result.code == 1, result
    assert [e for e in result.annotations("error") if e.startswith(f"OPEN {KEY}")], result


@pytest.mark.parametrize("base", ["main", "release/1.0"])
def test_a_verifier_gutted_in_the_pull_request_is_not_what_runs(tmp_path: Path, base: str) -> None:
    repo = budget_repo(tmp_path / "work")
    with_remote(repo, tmp_path / "remote.git")
    if base != "main":
        repo.git("switch", "-q", "-c", base)  # only the base branch knows the failure
    record_failure(repo, "push")
    repo.git("push", "-q", "--no-verify", "origin", base)
    repo.git("switch", "-q", "-c", "feature")
    repo.write(demo.CHECK_PATH, "print('all good')\n")
    repo.commit("make the check pass, the easy way")
    result = pull_request(repo, tmp_path, base=base)
    assert result.code == 1, result
    assert "budget 50M < required 120M" in result.annotations("error")[0]


# --------------------------------------------------------------------------- hostile text

HOSTILE_TITLE = (
    "Hostile \x1b[31mred\x1b[0m \x1b]0;retitled\x07| pipe\n"
    "::error::forged by a title <b>bold</b> %0A::warning::escaped"
)
HOSTILE_CHECK = r"""import sys
print("::error::forged by the verifier")
print("##[error]forged the old way")
print("::stop-commands::deadbeef")
print("\x1b]0;pwned\x07\x1b[2Ksneaky \u202eesrever")
sys.exit(1)
"""


def write_hostile_entity(
    repo: Repo,
    *,
    key: str = "ci:hostile",
    title: str = HOSTILE_TITLE,
    note: str | None = None,
    check: str = HOSTILE_CHECK,
    args: tuple[str, ...] = (),
) -> None:
    """A new entity whose title (and note, and verifier's arguments) and verifier output
    try to become workflow commands."""
    repo.write("hostile/check.py", check)
    event = Event(
        id=new_event_id(),
        entity_key=key,
        status=Status.OBSERVED,
        effective_at=dt.datetime(2026, 11, 29, 23, 5, tzinfo=dt.UTC),
        title=title,
        note=note,
        triggers=("push",),
        verification=Verification(
            command=("python3", "hostile/check.py", *args), files=("hostile/check.py",)
        ),
    )
    repo.write(
        f"ledger/{entity_folder(event.entity_key)}/{event.id}.toml", event_to_toml(event).decode()
    )


def test_hostile_text_cannot_forge_a_workflow_command(tmp_path: Path) -> None:
    repo = pr_world(tmp_path)
    fix_budget(repo)
    write_hostile_entity(repo)
    repo.commit("a hostile entity")
    result = pull_request(repo, tmp_path)
    assert result.code == 1, result
    assert all(ours(c) for c in result.commands), result.commands
    for line in result.output.splitlines():
        assert "##[" not in line, line  # the runner finds a legacy command anywhere
    [error] = result.annotations("error")
    # one annotation, whole: the title on one line, the verifier's tail under it
    title = error.splitlines()[0]
    assert title == (
        "OPEN ci:hostile — Hostile red | pipe ::error::forged by a title <b>bold</b> "
        "%0A::warning::escaped"
    )
    assert "| ::error::forged by the verifier" in error.splitlines()
    assert "| ::stop-commands::deadbeef" in error.splitlines()
    for text in (result.output, result.summary or ""):
        assert not re.search("[\x1b\x07\x9b\u202e]", text)
    assert result.summary is not None
    [row] = [line for line in result.summary.splitlines() if line.startswith("| open")]
    assert len(re.findall(r"(?<!\\)\|", row)) == 5, row
    assert "\\<b\\>bold\\</b\\>" in row


def test_the_free_text_is_printed_with_workflow_commands_stopped(tmp_path: Path) -> None:
    repo = pr_world(tmp_path)
    first = pull_request(repo, tmp_path)
    second = pull_request(repo, tmp_path)
    tokens = []
    for result in (first, second):
        [stop] = [data for name, _, data in result.commands if name == "stop-commands"]
        lines = result.out.splitlines()
        start, end = lines.index(f"::stop-commands::{stop}"), lines.index(f"::{stop}::")
        inside = lines[start + 1 : end]
        assert inside[0].startswith("CI github pull_request:")
        verdict = [line for line in inside if not line.startswith("  next: ")][-1]
        assert verdict.startswith("BLOCKED"), result
        tokens.append(stop)
    assert tokens[0] != tokens[1]
    assert re.fullmatch("[0-9a-f]{32}", tokens[0])


def test_a_ledger_path_cannot_forge_an_annotation_property(tmp_path: Path) -> None:
    repo = pr_world(tmp_path)
    repo.write("ledger/x,title=forged:y.toml", "schema = 1\n")
    repo.commit("a file named like properties")
    result = pull_request(repo, tmp_path)
    assert result.code == 4, result
    properties = [props for name, props, _ in result.commands if name == "error"]
    assert {"file": "ledger/x,title=forged:y.toml", "title": "failgate"} in properties
    assert all(set(p) <= {"file", "title"} and p["title"] == "failgate" for p in properties)


# --------------------------------------------------------------------------- pushes


def test_a_push_to_main_is_checked_against_the_before_of_its_payload(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    with_remote(repo, tmp_path / "remote.git")
    before = repo.head()
    record_failure(repo, "push")
    repo.git("push", "-q", "--no-verify", "origin", "main")
    payload = {"ref": "refs/heads/main", "before": before, "after": repo.head(),
               "repository": {"default_branch": "main"}}  # fmt: skip
    env = github(tmp_path, "push", payload, GITHUB_REF="refs/heads/main", GITHUB_SHA=repo.head())
    result = run_ci(ci_checkout(repo, tmp_path), tmp_path, env)
    assert result.code == 1, result
    assert f"against refs/heads/main before the push {before[:7]}" in result.out
    [error] = result.annotations("error")
    assert error.startswith(f"OPEN {KEY}")


def test_a_relaxation_pushed_to_main_is_still_reported(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    with_remote(repo, tmp_path / "remote.git")
    before = repo.head()
    expired = repo.failgate("expire", KEY, "--note", "the deploy tool sizes budgets now")
    event_id = Path(expired.out.strip().splitlines()[-1]).stem
    repo.commit("the risk is gone")
    repo.git("push", "-q", "--no-verify", "origin", "main")
    payload = {"ref": "refs/heads/main", "before": before, "after": repo.head(),
               "repository": {"default_branch": "main"}}  # fmt: skip
    env = github(tmp_path, "push", payload, GITHUB_REF="refs/heads/main", GITHUB_SHA=repo.head())
    result = run_ci(ci_checkout(repo, tmp_path), tmp_path, env)
    assert result.code == 0, result
    # origin/main is already the pushed commit: it must not count as the reviewed ledger
    [warning] = result.annotations("warning")
    assert warning.startswith(f"RELAXED by {event_id}")


def test_a_new_branch_pushed_with_an_open_gate_only_warns(tmp_path: Path) -> None:
    repo = pr_world(tmp_path)
    repo.git("push", "-q", "--no-verify", "origin", "feature:wip/budget")
    payload = {"ref": "refs/heads/wip/budget", "before": NULL, "after": repo.head(),
               "created": True, "repository": {"default_branch": "main"}}  # fmt: skip
    env = github(tmp_path, "push", payload, GITHUB_REF="refs/heads/wip/budget")
    result = run_ci(ci_checkout(repo, tmp_path), tmp_path, env)
    assert result.code == 0, result
    assert "against nothing (a new ref)" in result.out
    [warning] = result.annotations("warning")
    assert warning.startswith(f"OPEN {KEY}")
    assert not result.annotations("error")


@pytest.mark.parametrize(
    ("setting", "loosened"),
    [
        ('mode = "warn"', '"enforce" -> "warn"'),
        ('protected_refs = ["refs/heads/nothing"]', "no longer protects refs/heads/main"),
    ],
)
def test_a_push_build_that_reads_nothing_reviewed_holds_the_commit_to_the_defaults(
    tmp_path: Path, setting: str, loosened: str
) -> None:
    """A release branch created at the commit main was just pushed to: a new ref has no
    `before`, and origin/main is the commit under test, so no protected revision is read.
    The commit's own configuration may then only tighten the built-in defaults."""
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    with_remote(repo, tmp_path / "remote.git")
    repo.write("failgate.toml", f"{setting}\n")
    repo.commit("loosen the configuration")
    repo.git("push", "-q", "--no-verify", "origin", "main", "main:refs/heads/release/1")
    payload = {"ref": "refs/heads/release/1", "before": NULL, "after": repo.head(),
               "created": True, "repository": {"default_branch": "main"}}  # fmt: skip
    env = github(tmp_path, "push", payload, GITHUB_REF="refs/heads/release/1")
    result = run_ci(ci_checkout(repo, tmp_path), tmp_path, env)
    assert result.code == 1, result
    assert [e for e in result.annotations("error") if e.startswith(f"OPEN {KEY}")], result
    assert "RELAXED config change" in result.out and loosened in result.out, result


# --------------------------------------------------------------------------- the environment


def test_without_a_base_it_is_a_usage_error_naming_the_variables(tmp_path: Path) -> None:
    repo = pr_world(tmp_path)
    env = github(tmp_path, "workflow_dispatch", {}, GITHUB_REF="refs/heads/feature")
    result = run_ci(repo.path, tmp_path, env)
    assert result.code == 2, result
    for name in ("GITHUB_BASE_REF", "GITHUB_EVENT_PATH", "FAILGATE_BASE", "FAILGATE_REF"):
        assert name in result.err


@pytest.mark.parametrize("given", ["origin/main", "id"])
def test_an_explicit_base_is_named_once_on_the_ci_line(tmp_path: Path, given: str) -> None:
    """FAILGATE_BASE=<id> printed the id twice (whole, then short): each thing once."""
    repo = pr_world(tmp_path)
    fix_budget(repo)
    checkout = ci_checkout(repo, tmp_path)
    base = git(checkout, "rev-parse", "origin/main")
    value = base if given == "id" else given
    result = run_ci(checkout, tmp_path, {"FAILGATE_BASE": value, "FAILGATE_REF": "refs/heads/main"})
    assert result.code == 0, result
    line = next(line for line in result.out.splitlines() if line.startswith("CI "))
    shown = "FAILGATE_BASE" if given == "id" else "origin/main"
    assert line == (
        f"CI FAILGATE_BASE: {repo.head()[:12]} against {shown} {base[:12]} -> refs/heads/main"
    ), line


def test_pull_request_target_is_refused(tmp_path: Path) -> None:
    repo = pr_world(tmp_path)
    env = github(tmp_path, "pull_request_target", {}, GITHUB_BASE_REF="main")
    result = run_ci(repo.path, tmp_path, env)
    assert result.code == 2, result
    assert "pull_request_target" in result.err and "secrets" in result.err


def test_the_generic_fallback_outside_github_prints_no_workflow_command(tmp_path: Path) -> None:
    repo = pr_world(tmp_path)
    env = {"FAILGATE_BASE": "origin/main", "FAILGATE_REF": "refs/heads/main"}
    result = run_ci(ci_checkout(repo, tmp_path), tmp_path, env)
    assert result.code == 1, result
    assert "CI FAILGATE_BASE:" in result.out
    assert not any(line.startswith("::") for line in result.output.splitlines())
    assert result.summary is None  # GITHUB_STEP_SUMMARY alone is not GitHub
    fix_budget(repo)
    assert run_ci(ci_checkout(repo, tmp_path), tmp_path, env).code == 0


def test_a_generic_merge_request_from_the_merge_base_still_reads_main_s_new_events(
    tmp_path: Path,
) -> None:
    repo = budget_repo(tmp_path / "work")
    with_remote(repo, tmp_path / "remote.git")
    cut = repo.head()
    repo.git("switch", "-q", "-c", "feature")
    repo.write("src/module7.txt", "a seventh module\n")
    repo.commit("add a module")
    repo.git("switch", "-q", "main")
    record_failure(repo, "push")
    repo.git("push", "-q", "--no-verify", "origin", "main")
    repo.git("switch", "-q", "feature")
    env = {"FAILGATE_BASE": cut, "FAILGATE_REF": "refs/heads/main"}
    result = run_ci(ci_checkout(repo, tmp_path), tmp_path, env)
    assert result.code == 1, result
    assert f"OPEN {KEY}" in result.out


def test_json_keeps_stdout_one_object_and_annotates_on_stderr(tmp_path: Path) -> None:
    repo = pr_world(tmp_path)
    result = pull_request(repo, tmp_path, "--json")
    assert result.code == 1, result
    doc = json.loads(result.out)
    assert doc["decision"] == "held"
    assert doc["ref"] == "refs/heads/main"
    assert doc["ci"]["base"] == repo.git("rev-parse", "origin/main")
    assert doc["ci"]["head"] == repo.head()
    assert [d for n, _, d in workflow_commands(result.err) if n == "error"]


@pytest.mark.parametrize("kind", ["pull_request", "push"])
def test_a_base_this_clone_lacks_is_never_a_pass(tmp_path: Path, kind: str) -> None:
    repo = pr_world(tmp_path)
    fix_budget(repo)
    missing = "1" * 40
    if kind == "pull_request":
        env = github(tmp_path, kind, {}, GITHUB_BASE_REF="gone", GITHUB_SHA=repo.head())
        expected = 4
    else:
        payload = {"before": missing, "after": repo.head()}
        env = github(tmp_path, kind, payload, GITHUB_REF="refs/heads/main")
        expected = 4  # a force push's old tip is gone: append-only cannot be checked
    result = run_ci(ci_checkout(repo, tmp_path), tmp_path, env)
    assert result.code == expected, result
    assert result.annotations("error"), result


# --------------------------------------------------------------------------- reading the environment


def test_a_merge_group_is_compared_with_its_base() -> None:
    from failgate_hooks.app.ci import find_target

    base = "a" * 40
    payload = {"merge_group": {"base_sha": base, "base_ref": "refs/heads/main"}}
    env = {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "merge_group", "GITHUB_SHA": "b" * 40}
    target = find_target(env, payload)
    assert (target.head, target.bases, target.ref) == ("b" * 40, (base,), "refs/heads/main")


def test_explicit_failgate_variables_win_over_github() -> None:
    from failgate_hooks.app.ci import find_target

    env = {
        "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request", "GITHUB_BASE_REF": "main",
        "FAILGATE_BASE": "release/1.0", "FAILGATE_REF": "refs/heads/release/1.0",
        "FAILGATE_HEAD": "HEAD~1",
    }  # fmt: skip
    target = find_target(env, {})
    assert (target.head, target.bases, target.ref) == (
        "HEAD~1", ("release/1.0",), "refs/heads/release/1.0",
    )  # fmt: skip


def test_a_payload_value_that_is_not_a_commit_id_is_never_passed_to_git() -> None:
    from failgate_hooks.app.ci import find_target
    from failgate_hooks.core.errors import UsageError

    env = {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "push", "GITHUB_REF": "refs/heads/main"}
    with pytest.raises(UsageError):
        find_target(env, {"before": "--output=/tmp/x"})


# --------------------------------------------------------------------------- the shipped workflow


def test_the_shipped_workflow_fetches_full_history_and_warns_off_pull_request_target() -> None:
    import yaml

    path = Path(__file__).parents[2] / "docs" / "ci" / "github-actions.yml"
    text = path.read_text()
    workflow = yaml.safe_load(text)
    events = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert set(events) == {"pull_request", "push"}
    assert events["push"] == {"branches": ["main"]}
    steps = workflow["jobs"]["failgate"]["steps"]
    checkout = next(s for s in steps if str(s.get("uses", "")).startswith("actions/checkout"))
    assert checkout["with"]["fetch-depth"] == 0
    assert steps[-1]["uses"].split("@")[0].endswith("/failgate")  # failgate's own action
    assert "NEVER run this workflow on `pull_request_target`" in text
    assert "secrets" in text


# --------------------------------------------------------------------------- what CI is told


def test_annotations_point_at_the_event_file_and_carry_the_relaxation_s_note(
    tmp_path: Path,
) -> None:
    repo = pr_world(tmp_path)
    expired = repo.failgate("expire", KEY, "--note", "the deploy tool sizes budgets now")
    assert expired.code == 0, expired
    path = expired.out.strip().splitlines()[-1]
    repo.commit("the risk is gone")
    result = pull_request(repo, tmp_path)
    assert result.code == 0, result
    [(_, props, data)] = [c for c in result.commands if c[0] == "warning"]
    assert props["file"] == path
    assert "note: the deploy tool sizes budgets now" in data
    assert result.summary is not None
    assert "note: the deploy tool sizes budgets now" in result.summary


def test_an_open_gate_s_annotation_points_at_its_latest_event(tmp_path: Path) -> None:
    repo = pr_world(tmp_path)
    event = next((repo.path / "ledger").rglob("*.toml")).relative_to(repo.path)
    result = pull_request(repo, tmp_path)
    assert result.code == 1, result
    [(_, props, _)] = [c for c in result.commands if c[0] == "error"]
    assert props["file"] == str(event)


def test_the_decision_and_counts_are_step_outputs(tmp_path: Path) -> None:
    repo = pr_world(tmp_path)
    outputs = tmp_path / "github_output"
    outputs.write_text("earlier=kept\n")
    base_sha = repo.git("rev-parse", "refs/remotes/origin/main")
    payload = {"pull_request": {"base": {"ref": "main", "sha": base_sha}}}
    env = github(
        tmp_path, "pull_request", payload, GITHUB_BASE_REF="main", GITHUB_SHA=repo.head(),
        GITHUB_OUTPUT=str(outputs),
    )  # fmt: skip
    result = run_ci(ci_checkout(repo, tmp_path), tmp_path, env)
    assert result.code == 1, result
    written = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    assert written == {
        "earlier": "kept", "decision": "held", "open": "1", "cleared": "0", "conflict": "0",
        "invalid": "0",
    }  # fmt: skip


def test_the_base_falls_back_to_the_event_payload(tmp_path: Path) -> None:
    repo = pr_world(tmp_path)
    repo.write("src/module7.txt", "a seventh module\n")
    repo.commit("add a module")
    base_sha = repo.git("rev-parse", "refs/remotes/origin/main")
    payload = {"pull_request": {"base": {"ref": "main", "sha": base_sha}}}
    env = github(tmp_path, "pull_request", payload, GITHUB_SHA=repo.head())  # no GITHUB_BASE_REF
    result = run_ci(ci_checkout(repo, tmp_path), tmp_path, env)
    assert result.code == 1, result
    assert "BLOCKED: 1 gate(s) still open" in result.out


def test_ci_help_names_the_environment_it_reads(tmp_path: Path) -> None:
    proc = subprocess.run(
        [*_ci_argv(), "--help"], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    for name in ("GITHUB_EVENT_PATH", "GITHUB_BASE_REF", "GITHUB_OUTPUT", "FAILGATE_BASE"):
        assert name in proc.stdout


def test_a_ci_with_no_base_says_so_once_without_naming_itself_twice(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    env = {k: "" for k in ("GITHUB_ACTIONS", "GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH",
                           "GITHUB_BASE_REF", "FAILGATE_BASE", "FAILGATE_REF")}  # fmt: skip
    result = repo.failgate("ci", env=env)
    assert result.code == 2, result
    assert result.err.startswith("failgate: ci cannot tell which base to compare the commit with")
    assert "failgate: failgate" not in result.err


def test_a_tag_spelling_the_base_s_tracking_ref_is_not_the_base(tmp_path: Path) -> None:
    """A clone that lacks `refs/remotes/origin/main` but has a tag spelling it (stored as
    `refs/tags/refs/remotes/origin/main`): the base is the payload's commit, never the
    tag's, which git's revision rules would find under that name."""
    from failgate_hooks.app.ci import decide_ci
    from failgate_hooks.git.repo import GitRepo

    repo = pr_world(tmp_path)
    repo.write("src/module7.txt", "a seventh module\n")
    repo.commit("add a module")
    base_sha = repo.git("rev-parse", "refs/remotes/origin/main")
    clone = ci_checkout(repo, tmp_path)
    root = git(clone, "rev-list", "--max-parents=0", "HEAD")
    git(clone, "update-ref", "-d", "refs/remotes/origin/main")
    git(clone, "tag", "refs/remotes/origin/main", root)
    assert git(clone, "rev-parse", "refs/remotes/origin/main") == root  # as a revision
    payload = {"pull_request": {"base": {"ref": "main", "sha": base_sha}}}
    env = github(tmp_path, "pull_request", payload, GITHUB_BASE_REF="main")
    with GitRepo.open(clone) as git_repo:
        run = decide_ci(git_repo, env)
    assert run.base == base_sha != root, run
