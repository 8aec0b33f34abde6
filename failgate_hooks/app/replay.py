"""Historical replay (DESIGN §11): a gate proven on real history, from parent to repair.

The entity and its pinned verifier files come from one ledger revision, today's,
and run against every commit of REPAIR's first-parent chain back to PARENT, each
in a clean checkout with those files laid over it (§6). The proof holds only when
the verifier gives a verdict at both ends: held at the parent, cleared at the
repair. Pure of click: the CLI parses, calls `replay`, renders, and exits.
"""

from __future__ import annotations

import enum
import json
import os
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import failgate_hooks
from failgate_hooks.core import sanitize
from failgate_hooks.core.errors import GitError, UsageError
from failgate_hooks.core.events import Verification, is_valid_entity_key
from failgate_hooks.core.ids import short_id
from failgate_hooks.core.resolve import Outcome
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger.union import Revision, config_at, read_union
from failgate_hooks.verify.run import (
    DEFAULT_TIMEOUT_S,
    NO_VERDICT_DETAIL,
    NO_VERDICT_EXIT,
    Checkouts,
    CommandRun,
    Pin,
    PinError,
    resolve_pins,
    run_command,
    verifier_env,
    write_pins,
)

JSON_SCHEMA_VERSION = 1
OK_VERDICT = "REPLAY OK: held at parent, cleared at repair"

# (position from 1, number of steps, full commit id), called before each step runs.
Progress = Callable[[int, int, str], None]


class StepState(enum.StrEnum):
    """What the verifier said at one commit; only exit 0 and a plain failure are verdicts."""

    HELD = "held"
    CLEARED = "cleared"
    NO_VERDICT = "no_verdict"


_LABELS = {
    StepState.HELD: "HELD",
    StepState.CLEARED: "CLEARED",
    StepState.NO_VERDICT: "NO VERDICT",
}


@dataclass(frozen=True)
class ReplayStep:
    """The verifier's verdict on one commit of the chain."""

    commit: str
    subject: str
    state: StepState
    exit_code: int | None  # None: it timed out or never started
    duration_s: float
    detail: str = ""  # why there is no verdict, or how it ended
    output_tail: str = ""


@dataclass(frozen=True)
class ReplayReport:
    """Everything a replay found, for the text, the JSON and the receipt."""

    entity_key: str
    title: str
    trigger: str
    parent: str
    repair: str
    ledger_rev: str  # full id
    ledger_rev_label: str  # as the caller named it
    command: tuple[str, ...]
    pinned: tuple[tuple[str, str], ...]  # (path, blob id) as the ledger revision holds them
    timeout_s: float
    steps: tuple[ReplayStep, ...]  # oldest first: the parent first, the repair last
    changed_files: tuple[str, ...]
    expect_files: tuple[str, ...] | None
    author: str
    date: str
    reasons: tuple[str, ...]  # why the replay failed; empty when it proves the gate
    failgate_version: str = failgate_hooks.__version__

    @property
    def ok(self) -> bool:
        """Held at the parent, cleared at the repair, and the expected files changed."""
        return not self.reasons

    @property
    def reason(self) -> str | None:
        """Every reason the replay failed, in one line; None when it proves the gate."""
        return "; ".join(self.reasons) if self.reasons else None


# --------------------------------------------------------------------------- the replay


def replay(
    repo: GitRepo,
    interval: str,
    entity_key: str,
    *,
    trigger: str = "push",
    ledger_rev: str = "HEAD",
    direct: bool = False,
    expect_files: Sequence[str] | None = None,
    default_timeout_s: float = DEFAULT_TIMEOUT_S,
    progress: Progress | None = None,
    ledger_dir: str | None = None,
) -> ReplayReport:
    """Run `entity_key`'s verifier, as `ledger_rev` holds it, on every commit of PARENT..REPAIR."""
    # A UsageError (exit 2) for a bad interval, entity or verifier; a GitError when git
    # cannot answer. With no `ledger_dir`, the one configured at `ledger_rev` is read.
    if isinstance(expect_files, str):  # a str is a Sequence[str] too: one letter per path
        raise TypeError("expect_files is a list of paths, not one string")
    parent_rev, repair_rev = parse_interval(interval)
    parent = _resolve(repo, parent_rev, "PARENT")
    repair = _resolve(repo, repair_rev, "REPAIR")
    ledger_commit = _resolve(repo, ledger_rev, "--ledger-rev")
    if ledger_dir is None:
        ledger_dir = config_at(repo, ledger_commit, ledger_rev).ledger

    title, verification = _entity(repo, entity_key, trigger, ledger_rev, ledger_commit, ledger_dir)
    try:
        # Today's reviewed verifier, not history's: the commits replayed predate it.
        pins = resolve_pins(repo, ledger_commit, verification.files)
    except PinError as exc:
        raise UsageError(f"{entity_key}: {exc}; the verifier cannot run") from None

    if direct:
        _check_direct(repo, parent, repair)
    chain = first_parent_chain(repo, parent, repair)
    facts = _commit_facts(repo, chain)
    timeout_s = verification.timeout_s or default_timeout_s

    # Trust is not consulted: a person runs replay deliberately, on their own machine,
    # naming the entity; nothing arrives unasked as it does on a push. The pass cache
    # is neither read nor written either: every step of a proof runs.
    steps = []
    with Checkouts(repo) as checkouts:
        for position, commit in enumerate(chain, 1):
            if progress is not None:
                progress(position, len(chain), commit)
            run = _run_step(
                repo,
                checkouts,
                commit,
                pins,
                verification,
                entity_key=entity_key,
                trigger=trigger,
                timeout_s=timeout_s,
            )
            steps.append(_step(commit, facts[commit][2], run, timeout_s))

    changed = changed_files(repo, parent, repair)
    expected = None if expect_files is None else tuple(expect_files)
    return ReplayReport(
        entity_key=entity_key,
        title=title,
        trigger=trigger,
        parent=parent,
        repair=repair,
        ledger_rev=ledger_commit,
        ledger_rev_label=ledger_rev,
        command=verification.command,
        pinned=tuple((pin.path, pin.oid) for pin in pins),
        timeout_s=timeout_s,
        steps=tuple(steps),
        changed_files=changed,
        expect_files=expected,
        author=facts[repair][0],
        date=facts[repair][1],
        reasons=_reasons(steps, changed, expected),
    )


def parse_interval(interval: str) -> tuple[str, str]:
    """PARENT and REPAIR from `PARENT..REPAIR`; UsageError for any other shape."""
    parent, sep, repair = interval.partition("..")
    if not sep or not parent or not repair or repair.startswith("."):
        raise UsageError(
            f"expected an interval PARENT..REPAIR, got {interval!r}",
            hint="two revisions joined by two dots, e.g. 4d1e0b2..9f2a1c4",
        )
    return parent, repair


def _resolve(repo: GitRepo, rev: str, what: str) -> str:
    """The full commit id of `rev`; an unknown name is a bad argument, not an integrity error."""
    try:
        return repo.resolve_commit(rev)
    except GitError as exc:
        raise UsageError(f"{what}: {exc.message}", hint=exc.hint) from None


def _entity(
    repo: GitRepo,
    entity_key: str,
    trigger: str,
    ledger_rev: str,
    ledger_commit: str,
    ledger_dir: str,
) -> tuple[str, Verification]:
    """The entity's title and verification as the ledger at `ledger_commit` resolves them."""
    where = f"the ledger at {ledger_rev} ({short_id(ledger_commit)})"
    if not is_valid_entity_key(entity_key):
        raise UsageError(
            f"{entity_key!r} is not an entity key (segments of [a-z0-9][a-z0-9_-]* joined by ':')"
        )
    ledger = read_union(repo, [Revision(ledger_rev, ledger_commit, protected=True)], ledger_dir)
    if entity_key not in ledger.entity_keys:
        raise UsageError(
            f"no entity {entity_key} in {where}",
            hint="the event is read from --ledger-rev (default HEAD): commit it, or name its rev",
        )
    resolution = ledger.resolve(entity_key)
    if resolution.outcome is Outcome.INVALID:
        first = resolution.problems[0].describe() if resolution.problems else "invalid"
        raise UsageError(f"{entity_key} is invalid in {where}: {first}")
    if resolution.outcome is Outcome.CONFLICT:
        raise UsageError(
            f"{entity_key} is in conflict in {where} (heads {', '.join(resolution.heads)})",
            hint="settle it with an event that follows every head, then replay",
        )
    state = resolution.state
    if state.verification is None:
        raise UsageError(
            f"{entity_key} has no verifier in {where}: nothing to replay",
            hint="record one with `failgate record KEY --verify CMD --verify-file PATH`",
        )
    # Triggers are not scope: a gate that never checks this trigger proves nothing for it.
    triggers = state.triggers or ()
    if trigger not in triggers:
        raise UsageError(
            f'{entity_key} is not checked for "{trigger}" (its triggers: {", ".join(triggers)})',
            hint="pass --trigger with one of them",
        )
    return state.title or "", state.verification


def _check_direct(repo: GitRepo, parent: str, repair: str) -> None:
    """`--direct`: REPAIR's first parent must be PARENT itself."""
    parents = repo.commit_parents(repair)
    if not parents or parents[0] != parent:
        first = short_id(parents[0]) if parents else "none: it is a root commit"
        raise UsageError(
            f"--direct: the first parent of REPAIR {short_id(repair)} is {first}, "
            f"not PARENT {short_id(parent)}"
        )


def first_parent_chain(repo: GitRepo, parent: str, repair: str) -> list[str]:
    """REPAIR's first-parent chain back to PARENT, oldest first, both ends included."""
    if parent == repair:
        raise UsageError(f"PARENT and REPAIR are the same commit {short_id(parent)}")
    if not repo.is_ancestor(parent, repair):
        if repo.is_shallow():
            raise GitError(
                f"this is a shallow clone: cannot tell whether {short_id(parent)} "
                f"is an ancestor of {short_id(repair)}",
                hint="fetch full history (git fetch --unshallow)",
            )
        raise UsageError(
            f"PARENT {short_id(parent)} is not an ancestor of REPAIR {short_id(repair)}: "
            "it must be on REPAIR's first-parent chain"
        )
    # The commits that descend from PARENT and lead to REPAIR: one walk, not one per step.
    between = set(repo.run("rev-list", "--ancestry-path", f"{parent}..{repair}").split())
    chain = [repair]
    while True:
        parents = repo.commit_parents(chain[-1])
        first = parents[0] if parents else None
        if first == parent:
            chain.append(parent)
            return chain[::-1]
        if first is None or first not in between:
            raise UsageError(
                f"PARENT {short_id(parent)} is not on REPAIR {short_id(repair)}'s first-parent "
                f"chain: it came in through another parent of a merge at or before "
                f"{short_id(chain[-1])}",
                hint="replay from a commit on the first-parent chain (git log --first-parent)",
            )
        chain.append(first)


def changed_files(repo: GitRepo, parent: str, repair: str) -> tuple[str, ...]:
    """The paths that differ between PARENT's tree and REPAIR's, sorted."""
    # Plumbing, so a user's diff.relative or rename settings cannot change the answer;
    # a rename is both paths, because both changed.
    out = repo.run(
        "diff-tree", "-r", "-z", "--name-only", "--no-renames", parent, repair, strip=False
    )
    return tuple(sorted(path for path in out.split("\0") if path))


def _commit_facts(repo: GitRepo, commits: Sequence[str]) -> dict[str, tuple[str, str, str]]:
    """(author, author date, subject) of each commit, from one `git log`."""
    out = repo.run(
        "log",
        "--no-walk=unsorted",
        "--no-show-signature",
        "--stdin",
        "--format=%H%x00%an <%ae>%x00%aI%x00%s",
        stdin="\n".join(commits) + "\n",
    )
    facts: dict[str, tuple[str, str, str]] = {}
    # Only "\n" ends a record: an author or a subject may hold \r or NEL, at which
    # splitlines() would also break, losing the commit.
    for line in out.split("\n"):
        fields = line.split("\0")
        if len(fields) == 4:
            facts[fields[0]] = (fields[1], fields[2], fields[3])
    missing = [c for c in commits if c not in facts]
    if missing:
        raise GitError(f"git log gave nothing for commit {missing[0]}")
    return facts


def _run_step(
    repo: GitRepo,
    checkouts: Checkouts,
    commit: str,
    pins: Sequence[Pin],
    verification: Verification,
    *,
    entity_key: str,
    trigger: str,
    timeout_s: float,
) -> CommandRun:
    """The verifier in a clean checkout of `commit`, the pinned files laid over it."""
    env, _refused = verifier_env(
        os.environ,
        env_pass=verification.env_pass,
        commit=commit,
        entity_key=entity_key,
        trigger=trigger,
        ref=None,
        environment=None,
    )
    # Always a clean checkout, whatever `workdir` says: history has no work tree.
    try:
        with checkouts.checkout(commit) as root:
            write_pins(repo, root, pins)
            return run_command(verification.command, cwd=root, env=env, timeout_s=timeout_s)
    except OSError as exc:  # a full or read-only TMPDIR
        return CommandRun(None, 0.0, start_error=f"cannot prepare a clean checkout: {exc}")


def _step(commit: str, subject: str, run: CommandRun, timeout_s: float) -> ReplayStep:
    """One step's state: 0 clears, 125 or no run at all gives no verdict, the rest holds."""
    if run.start_error is not None:
        state, detail = StepState.NO_VERDICT, run.start_error
    elif run.timed_out:
        state, detail = StepState.NO_VERDICT, f"timed out after {timeout_s:g} s"
    elif run.exit_code == 0:
        state, detail = StepState.CLEARED, ""
    elif run.exit_code == NO_VERDICT_EXIT:
        state, detail = StepState.NO_VERDICT, NO_VERDICT_DETAIL
    else:
        state, detail = StepState.HELD, ""
    return ReplayStep(
        commit=commit,
        subject=subject,
        state=state,
        exit_code=None if run.timed_out else run.exit_code,
        duration_s=run.duration_s,
        detail=detail,
        output_tail=run.output_tail,
    )


def _reasons(
    steps: Sequence[ReplayStep], changed: Sequence[str], expected: Sequence[str] | None
) -> tuple[str, ...]:
    """Why the replay proves nothing; empty when it proves the gate."""
    reasons = []
    first, last = steps[0], steps[-1]
    if first.state is StepState.NO_VERDICT:
        reasons.append(
            f"no verdict at the parent {short_id(first.commit)} ({first.detail}): "
            "a gate held for the wrong reason proves nothing"
        )
    elif first.state is StepState.CLEARED:
        reasons.append(
            f"cleared at the parent {short_id(first.commit)}: the verifier does not see the failure"
        )
    if last.state is StepState.NO_VERDICT:
        reasons.append(f"no verdict at the repair {short_id(last.commit)} ({last.detail})")
    elif last.state is StepState.HELD:
        reasons.append(
            f"still held at the repair {short_id(last.commit)} (exit {last.exit_code}): "
            "the repair does not repair"
        )
    if expected is not None and set(expected) != set(changed):
        parts = []
        if unchanged := sorted(set(expected) - set(changed)):
            parts.append(f"expected but not changed: {', '.join(unchanged)}")
        if unexpected := sorted(set(changed) - set(expected)):
            parts.append(f"changed but not expected: {', '.join(unexpected)}")
        reasons.append(f"the changed files differ from --expect-files ({'; '.join(parts)})")
    return tuple(reasons)


# --------------------------------------------------------------------------- rendering


def _line(text: str) -> str:
    return sanitize.clean_line(text)


def _short(commit: str) -> str:
    return short_id(_line(commit))


def _exit(step: ReplayStep) -> str:
    return "-" if step.exit_code is None else str(step.exit_code)


def _verdict(report: ReplayReport) -> str:
    return OK_VERDICT if report.ok else f"REPLAY FAILED: {_line(report.reason or '')}"


def render_replay_text(report: ReplayReport) -> str:
    """§11's text: a header, one line per commit oldest first, the repair, the verdict."""
    lines = [
        f"REPLAY {_line(report.entity_key)} over "
        f"{_short(report.parent)}..{_short(report.repair)}: {len(report.steps)} commit(s), "
        f"verifier {_line(shlex.join(report.command))} from {_line(report.ledger_rev_label)} "
        f"@ {_short(report.ledger_rev)}"
    ]
    for step in report.steps:
        lines.append(
            f"{_short(step.commit)}  {_LABELS[step.state]}  "
            f"exit {_exit(step)} in {step.duration_s:.2f} s  {_line(step.subject)}"
        )
    lines.append(f"repair: {_line(report.author)} {_line(report.date)}")
    changed = ", ".join(_line(path) for path in report.changed_files) or "(none)"
    lines.append(f"changed: {changed}")
    lines.append(_verdict(report))
    return "\n".join(lines)


def render_replay_json(report: ReplayReport) -> str:
    """§11's JSON object: the text's facts, and a few more; fields are only ever added."""
    doc: dict[str, Any] = {
        "schema_version": JSON_SCHEMA_VERSION,
        "ok": report.ok,
        "entity_key": report.entity_key,
        "title": report.title,
        "trigger": report.trigger,
        "parent": report.parent,
        "repair": report.repair,
        "ledger_rev": report.ledger_rev,
        "command": list(report.command),
        "pinned_files": [{"path": path, "blob": oid} for path, oid in report.pinned],
        "timeout_s": report.timeout_s,
        "steps": [
            {
                "commit": step.commit,
                "state": step.state.value,
                "exit_code": step.exit_code,
                "duration_s": round(step.duration_s, 3),
                "subject": step.subject,
                "detail": step.detail,
            }
            for step in report.steps
        ],
        "changed_files": list(report.changed_files),
        "expect_files": None if report.expect_files is None else list(report.expect_files),
        "author": report.author,
        "date": report.date,
        "reason": report.reason,
        "failgate_version": report.failgate_version,
    }
    # ASCII only: even a character the sanitiser let through reaches no terminal raw.
    return json.dumps(sanitize.clean_tree(doc), indent=2, ensure_ascii=True)


# What Markdown could read as markup or HTML inside a line: a backslash makes each
# literal. Marks that only count at a line's start (#, -, +) never start one here.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&])")


def _md(text: str) -> str:
    """One line of data as literal Markdown text, table pipes included."""
    return _MD_SPECIAL.sub(r"\\\1", _line(text))


def _md_code(text: str, *, table: bool = True) -> str:
    """One line of data as an inline code span that nothing inside can close."""
    text = _line(text)
    if not text:
        return "(empty)"  # `` is no code span: Markdown would print the backticks
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    if table:  # in a table a pipe ends the cell even inside a code span (GFM)
        text = text.replace("|", "\\|")
    # Markdown strips one space from each end, which a span needs beside a backtick.
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _md_block(text: str) -> list[str]:
    """Many lines of data as a fenced block that nothing inside can close."""
    text = sanitize.clean(text).rstrip("\n") or "(no output)"
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}text", *text.split("\n"), fence]


def render_receipt(report: ReplayReport) -> str:
    """A Markdown receipt: what was replayed, with which verifier, and what each commit gave."""
    lines = [
        f"# failgate replay receipt: {_md_code(report.entity_key, table=False)}",
        "",
        f"**{_md(_verdict(report))}**",
        "",
        "| | |",
        "|---|---|",
        f"| entity | {_md_code(report.entity_key)} {_md(report.title)} |",
        f"| trigger | {_md_code(report.trigger)} |",
        f"| parent | {_md_code(report.parent)} |",
        f"| repair | {_md_code(report.repair)} |",
        f"| repair author | {_md_code(report.author)} |",
        f"| repair date | {_md_code(report.date)} |",
        f"| ledger revision | {_md_code(report.ledger_rev)} "
        f"(named {_md_code(report.ledger_rev_label)}) |",
        f"| verifier argv | {_md_code(json.dumps(list(report.command)))} |",
        f"| pinned files | {_pinned(report)} |",
        f"| timeout | {report.timeout_s:g} s |",
        f"| failgate version | {_md_code(report.failgate_version)} |",
        "",
        "## Steps, oldest first",
        "",
        "| commit | state | exit | duration | subject |",
        "|---|---|---|---|---|",
    ]
    for step in report.steps:
        state = _LABELS[step.state]
        if step.detail:
            state += f": {_md(step.detail)}"
        lines.append(
            f"| {_md_code(step.commit)} | {state} | {_exit(step)} | "
            f"{step.duration_s:.2f} s | {_md(step.subject)} |"
        )
    lines += ["", "## Files changed between parent and repair", ""]
    lines += [f"- {_md_code(path, table=False)}" for path in report.changed_files] or ["(none)"]
    if report.expect_files is not None:
        expected = ", ".join(_md_code(p, table=False) for p in report.expect_files) or "(none)"
        lines += ["", f"Expected: {expected}"]
    for name, step in (("parent", report.steps[0]), ("repair", report.steps[-1])):
        lines += ["", f"## Verifier output at the {name}", "", *_md_block(step.output_tail)]
    return "\n".join(lines) + "\n"


def _pinned(report: ReplayReport) -> str:
    if not report.pinned:
        return "(none)"
    return ", ".join(f"{_md_code(path)} @ blob {_md_code(oid)}" for path, oid in report.pinned)
