"""`failgate ci`: the CI gate in one command (DESIGN §7; authority §4; ledger §5).

CI finds what it checks in its environment: the commit under test, the base it
is compared with and the destination ref. The base's ledger is the protected
revision, append-only is checked over base..head, and every verifier runs,
trusted, since in CI the repository is the trust boundary. In CI the review is
the authority: relaxing events are accepted, and each one is reported so that
the reviewer sees it.

On GitHub Actions the decision also becomes workflow commands (`::error`,
`::warning`) and a Markdown step summary. Everything failgate prints there may
come from the ledger, a verifier or git, so it is sanitised and escaped, and the
free text is printed between `::stop-commands::` markers: no line of it can
forge a workflow command.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TextIO

from failgate_hooks.app.evaluate import Request
from failgate_hooks.app.push import config_for
from failgate_hooks.core import exitcodes, sanitize
from failgate_hooks.core.errors import FailgateError, GitError, UsageError
from failgate_hooks.core.events import Problem
from failgate_hooks.core.gates import Context, Decision, Gate, GateState, Relaxation
from failgate_hooks.core.ids import short_id
from failgate_hooks.git.repo import HEX_ID_RE, GitRepo, is_null_id, remote_default_branch
from failgate_hooks.ledger.appendonly import check_update
from failgate_hooks.ledger.union import Revision

# actions/checkout always names its remote `origin`.
REMOTE = "origin"
TRIGGER = "push"
ENV_BASE = "FAILGATE_BASE"
ENV_REF = "FAILGATE_REF"
ENV_HEAD = "FAILGATE_HEAD"

SHALLOW_MESSAGE = (
    "this is a shallow clone: failgate ci needs the full history to check the ledger "
    "over base..head and to tell a gate's ancestry"
)
SHALLOW_HINT = "with actions/checkout set `fetch-depth: 0`; elsewhere run `git fetch --unshallow`"
NO_BASE_MESSAGE = (
    "failgate ci cannot tell which base to compare the commit with: on GitHub Actions run "
    "it on pull_request (GITHUB_BASE_REF) or push events (the push's `before`, read from "
    "GITHUB_EVENT_PATH); elsewhere set FAILGATE_BASE (the revision the change is compared "
    "with, e.g. origin/main) and FAILGATE_REF (the destination ref, e.g. refs/heads/main)"
)
PULL_REQUEST_TARGET_MESSAGE = (
    "failgate ci refuses to run on pull_request_target: it would run the pull request's "
    "verifier code with the base repository's secrets"
)
PULL_REQUEST_TARGET_HINT = "run it on pull_request (see docs/ci/github-actions.yml)"
RELAXED_NOTE = (
    "accepted: in CI the review is the authority, so an owner of the ledger folder "
    "must review this change (CODEOWNERS)"
)
_LABELS = {GateState.OPEN: "OPEN", GateState.CONFLICT: "CONFLICT", GateState.INVALID: "INVALID"}


@dataclass(frozen=True)
class CiTarget:
    """What one CI run checks, as the environment names it (revisions, not yet ids)."""

    source: str  # for people: "github pull_request", "FAILGATE_BASE", …
    head: str
    bases: tuple[str, ...]  # names of the base, the first one git knows wins
    base_label: str
    ref: str | None  # the destination; None: unknown, and an unknown destination blocks
    new_ref: bool = False  # a push that creates the ref: there is no base
    # A push's `before` may be gone (a force push): fail closed, not with an error.
    base_may_be_gone: bool = False
    # A pull request's base may have moved on since the branch was cut.
    from_merge_base: bool = False
    deletion: bool = False
    default_branch: str | None = None  # the repository's default branch, when CI says it


@dataclass(frozen=True)
class CiRun:
    """The outcome of `failgate ci`: what was compared, and the decision (None: a deletion)."""

    target: CiTarget
    head: str
    base: str | None
    decision: Decision | None
    notes: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        return exitcodes.ALLOWED if self.decision is None else self.decision.exit_code


# --------------------------------------------------------------------------- the environment


def on_github(environ: Mapping[str, str]) -> bool:
    return environ.get("GITHUB_ACTIONS") == "true"


def load_event(environ: Mapping[str, str]) -> Mapping[str, Any]:
    """The GitHub event payload at GITHUB_EVENT_PATH, or {} when there is none."""
    path = environ.get("GITHUB_EVENT_PATH")
    if not on_github(environ) or not path:
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            payload = json.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"GITHUB_EVENT_PATH {path}: not a readable JSON event: {exc}") from None
    return payload if isinstance(payload, dict) else {}


def _text(payload: Mapping[str, Any], *keys: str) -> str | None:
    """The string at payload[k1][k2]…, or None when any step is missing or not that type."""
    value: Any = payload
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value if isinstance(value, str) and value else None


def _commit_id(value: str | None) -> str | None:
    """A full commit id from the payload; anything else is ignored, never passed to git."""
    return value if value is not None and HEX_ID_RE.match(value) else None


def find_target(environ: Mapping[str, str], event: Mapping[str, Any]) -> CiTarget:
    """Head, base and destination from the CI environment: GitHub first, then FAILGATE_*."""
    github = on_github(environ)
    name = environ.get("GITHUB_EVENT_NAME", "") if github else ""
    if name == "pull_request_target":
        raise UsageError(PULL_REQUEST_TARGET_MESSAGE, hint=PULL_REQUEST_TARGET_HINT)
    found = _github_target(environ, event, name) if github else None
    explicit_head = environ.get(ENV_HEAD)
    head = explicit_head or (environ.get("GITHUB_SHA") if github else None) or "HEAD"
    explicit_base = environ.get(ENV_BASE)
    explicit_ref = environ.get(ENV_REF)
    if explicit_base:
        # An explicit base wins: the team said what to compare with.
        github_ref = environ.get("GITHUB_REF") if github else None
        return CiTarget(
            source=ENV_BASE,
            head=head,
            bases=() if is_null_id(explicit_base) else (explicit_base,),
            base_label=f"{ENV_BASE} {explicit_base}",
            ref=explicit_ref or (found.ref if found else github_ref),
            new_ref=is_null_id(explicit_base),
            default_branch=found.default_branch if found else None,
        )
    if found is None:
        raise UsageError(NO_BASE_MESSAGE)
    if explicit_ref:
        found = replace(found, ref=explicit_ref)
    return replace(found, head=head)


def _github_target(
    environ: Mapping[str, str], event: Mapping[str, Any], name: str
) -> CiTarget | None:
    """The target a GitHub Actions event names, or None when it names no base."""
    default = _text(event, "repository", "default_branch")
    base_branch = environ.get("GITHUB_BASE_REF")
    if base_branch:
        payload_base = _commit_id(_text(event, "pull_request", "base", "sha"))
        return CiTarget(
            source=f"github {name or 'pull_request'}",
            head="HEAD",
            bases=(f"refs/remotes/{REMOTE}/{base_branch}", *filter(None, [payload_base])),
            base_label=f"{REMOTE}/{base_branch}",
            ref=f"refs/heads/{base_branch}",
            from_merge_base=True,
            default_branch=default,
        )
    if name == "merge_group":
        base_sha = _commit_id(_text(event, "merge_group", "base_sha"))
        base_ref = _text(event, "merge_group", "base_ref")
        if base_sha is None:
            return None
        return CiTarget(
            source="github merge_group",
            head="HEAD",
            bases=(base_sha,),
            base_label=base_ref or "the merge group's base",
            ref=base_ref,
            default_branch=default,
        )
    ref = environ.get("GITHUB_REF") or _text(event, "ref")
    if name != "push" or ref is None:
        return None
    after = _text(event, "after")
    if event.get("deleted") is True or (after is not None and is_null_id(after)):
        return CiTarget("github push", "HEAD", (), "", ref, deletion=True, default_branch=default)
    before = _commit_id(_text(event, "before"))
    if before is None:
        return None
    if is_null_id(before):
        return CiTarget("github push", "HEAD", (), "", ref, new_ref=True, default_branch=default)
    return CiTarget(
        source="github push",
        head="HEAD",
        bases=(before,),
        base_label=f"{ref} before the push",
        ref=ref,
        base_may_be_gone=True,
        default_branch=default,
    )


# --------------------------------------------------------------------------- the decision


def decide_ci(repo: GitRepo, environ: Mapping[str, str]) -> CiRun:
    """The §4 decision for the commit CI tests, against the base the environment names."""
    if repo.is_shallow():
        raise GitError(SHALLOW_MESSAGE, hint=SHALLOW_HINT)
    target = find_target(environ, load_event(environ))
    if target.deletion:
        return CiRun(target, "", None, None, (f"the push deletes {target.ref}: nothing to check",))
    head = repo.try_resolve_commit(target.head)
    if head is None:
        raise GitError(
            f"the commit under test, {target.head}, is not in this clone",
            hint=f"check out the commit CI tests, or set {ENV_HEAD} to the revision to check",
        )
    notes: list[str] = []
    history: list[Problem] = []
    base = next((c for c in map(repo.try_resolve_commit, target.bases) if c is not None), None)
    if base is None and target.bases and not target.base_may_be_gone:
        raise GitError(
            f"the base {target.base_label} is not in this clone",
            hint=f"fetch it ({SHALLOW_HINT}), or set {ENV_BASE} to a revision this clone has",
        )
    if base is None and target.bases:
        # The old tip is unreachable (a force push): what it held cannot be compared,
        # so this fails closed where an append-only violation would block.
        history.append(
            Problem(
                code="append-only",
                message=f"the base {target.base_label} ({short_id(target.bases[0])}) is not in "
                "this clone (a force push?): failgate cannot check that no event was dropped",
                commit=head,
            )
        )

    revisions = [Revision("commit under test", head)]
    if base is not None:
        revisions.append(Revision(f"base {target.base_label}", base, protected=True))
    default = _default_branch(repo, target, head)
    extra_protected: tuple[str, ...] = ()
    if default is not None:
        tracking, commit, branch = default
        extra_protected = (f"refs/heads/{branch}",)
        if commit is not None:
            revisions.append(Revision(tracking, commit, protected=True))
    config = config_for(repo, revisions)

    old = base
    if base is not None and target.from_merge_base and not repo.is_ancestor(base, head):
        old = _merge_base(repo, base, head)
        notes.append(f"{target.base_label} moved on: checked append-only from the merge base")
    # A new ref: commits the default branch already holds were checked on their way there.
    exclude = [default[1]] if base is None and default is not None and default[1] else []
    history += check_update(repo, old, head, config.ledger, exclude=exclude)

    request = Request(
        commit=head,
        context=Context(trigger=TRIGGER, ref=target.ref),
        revisions=tuple(revisions),
        # In CI the review is the authority (§4): relaxations apply and are reported.
        authority="accept",
        trust_ledger=True,
        extra_protected_refs=extra_protected,
        history_errors=tuple(history),
    )
    from failgate_hooks.app.runner import decide_with_verifiers

    decision = decide_with_verifiers(repo, config, request)
    return CiRun(target, head, base, decision, tuple(notes))


def _default_branch(
    repo: GitRepo, target: CiTarget, head: str
) -> tuple[str, str | None, str] | None:
    """(tracking ref, commit or None, branch) of the repository's default branch.

    Its ledger counts as protected only while it does not already hold the change
    under test: after a push to it, the clone's tracking ref is the pushed commit.
    """
    if target.default_branch:
        tracking = f"refs/remotes/{REMOTE}/{target.default_branch}"
        found: tuple[str, str | None] | None = (tracking, repo.try_resolve_commit(tracking))
    else:
        found = remote_default_branch(repo, REMOTE)
    if found is None:
        return None
    tracking, commit = found
    if commit is not None and repo.is_ancestor(head, commit):
        commit = None
    return tracking, commit, tracking.removeprefix(f"refs/remotes/{REMOTE}/")


def _merge_base(repo: GitRepo, base: str, head: str) -> str:
    """Where head's history left base's; base itself when they share none (fails closed)."""
    try:
        return repo.run("merge-base", base, head).split()[0]
    except (GitError, IndexError):
        return base


# --------------------------------------------------------------------------- the output


def run_ci(
    repo: GitRepo,
    environ: Mapping[str, str],
    *,
    stdout: TextIO,
    stderr: TextIO,
    as_json: bool = False,
) -> int:
    """`failgate ci`: decide, print, annotate on GitHub; the decision's exit code (0/1/3/4)."""
    github = on_github(environ)
    # With --json, stdout is one JSON object: workflow commands go to stderr,
    # which the Actions runner reads for them as well.
    commands = stderr if as_json else stdout
    try:
        run = decide_ci(repo, environ)
    except FailgateError as error:
        if github:
            lines = [error.message, *([f"hint: {error.hint}"] if error.hint else [])]
            commands.write(workflow_command("error", lines) + "\n")
            _write_summary(environ, error_summary(error), stderr)
        raise
    if run.decision is None:
        for note in run.notes:
            stdout.write(f"failgate ci: {sanitize.clean_line(note)}\n")
        return run.exit_code
    if github:
        for line in annotation_lines(run.decision):
            commands.write(line + "\n")
        _write_summary(environ, step_summary(run), stderr)
    if as_json:
        stdout.write(render_ci_json(run) + "\n")
    else:
        stdout.write(_guarded(render_ci_text(run, color=stdout.isatty()), github) + "\n")
    stdout.flush()
    return run.exit_code


def render_ci_text(run: CiRun, *, color: bool = False) -> str:
    """What was compared, then the §10 text of the decision."""
    from failgate_hooks.render.text import render_text

    assert run.decision is not None
    lines = [f"CI {_line(run.target.source)}: {short_id(_line(run.head))} {_against(run)}"]
    lines += [f"NOTE {_line(note)}" for note in run.notes]
    lines.append(render_text(run.decision, color=color))
    return "\n".join(lines)


def render_ci_json(run: CiRun) -> str:
    """The §10 JSON object, with a `ci` field saying what was compared."""
    from failgate_hooks.render.text import render_json

    assert run.decision is not None
    doc = json.loads(render_json(run.decision))
    doc["ci"] = {
        "source": run.target.source,
        "head": run.head,
        "base": run.base,
        "base_label": run.target.base_label,
        "ref": run.target.ref,
        "notes": list(run.notes),
    }
    return json.dumps(sanitize.clean_tree(doc), indent=2, ensure_ascii=True)


def _against(run: CiRun) -> str:
    """What the commit was compared with and where it goes, for people."""
    if run.base:
        base = f"against {_line(run.target.base_label)} {short_id(_line(run.base))}"
    elif run.target.new_ref:
        base = "against nothing (a new ref)"
    else:
        base = "against a base this clone lacks"
    return f"{base} -> {_line(run.target.ref or '(no ref)')}"


def _guarded(text: str, github: bool) -> str:
    """On GitHub, free text between stop-commands markers: no line of it is a command."""
    if not github:
        return text
    # A fresh random token: text from the ledger cannot guess it to resume commands.
    token = secrets.token_hex(16)
    return f"::stop-commands::{token}\n{text}\n::{token}::"


# --------------------------------------------------------------------------- workflow commands


def escape_data(text: str) -> str:
    """A workflow command's message: %, CR and LF escaped as the runner unescapes them."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: also `:` and `,`, which end a property."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(kind: str, lines: Sequence[str], *, file: str | None = None) -> str:
    """`::error title=failgate::…` (or warning): each line sanitised, all of it escaped."""
    props = []
    if file:
        props.append(f"file={escape_property(sanitize.clean_line(file))}")
    props.append("title=failgate")
    # Each line is one field: a newline inside one never starts another line.
    message = "\n".join(sanitize.clean_line(line) for line in lines)
    return f"::{kind} {','.join(props)}::{escape_data(message)}"


def annotation_lines(decision: Decision) -> list[str]:
    """One command per blocking or warning gate and problem, and one per relaxation."""
    out = []
    for gate in decision.gates:
        if gate.blocking or gate.warning:
            kind = "error" if gate.blocking else "warning"
            out.append(workflow_command(kind, _gate_message(gate)))
    for relaxation in decision.relaxations:
        kind = "error" if relaxation.blocking else "warning"
        out.append(workflow_command(kind, _relaxation_message(relaxation)))
    for problem in decision.errors:
        out.append(workflow_command("error", [problem.describe()], file=problem.path))
    for problem in decision.warnings:
        out.append(workflow_command("warning", [problem.describe()], file=problem.path))
    return out


def _gate_message(gate: Gate) -> list[str]:
    """The gate's line, why it is in that state, and its verifier's last lines."""
    from failgate_hooks.render.text import render_tail

    head = f"{_LABELS.get(gate.state, gate.state.value.upper())} {gate.entity_key}"
    if gate.title:
        head += f" — {gate.title}"
    lines = [head]
    lines += [p.describe() for p in gate.problems] or [gate.reason]
    lines += list(gate.notes)
    if gate.verifier is not None:
        lines += [line.strip() for line in render_tail(gate.verifier.output_tail)]
    return lines


def _relaxation_message(relaxation: Relaxation) -> list[str]:
    what = f"({relaxation.entity_key}: {relaxation.what or relaxation.kind})"
    if relaxation.accepted:
        return [f"RELAXED by {relaxation.event_id} {what}", RELAXED_NOTE]
    return [f"PENDING {relaxation.event_id} {what}: not yet in a protected revision"]


# --------------------------------------------------------------------------- step summary

# The characters that are Markdown syntax anywhere in a line (data never starts one):
# emphasis, code, links, HTML, entities, tables, strikethrough, #123 references.
_MARKDOWN = re.compile(r"([\\`*_\[\]<>|~&#])")


def md(text: str) -> str:
    """Data as literal Markdown text on one line: sanitised, every syntax character escaped."""
    return _MARKDOWN.sub(r"\\\1", sanitize.clean_line(text))


def step_summary(run: CiRun) -> str:
    """The Markdown for $GITHUB_STEP_SUMMARY: the gates, the relaxations, the verdict."""
    from failgate_hooks.render.text import render_text

    decision = run.decision
    assert decision is not None
    verdict = render_text(decision).splitlines()[-1]
    label = verdict.split(":", 1)[0]
    lines = [
        f"## failgate: {md(label)}",
        "",
        f"`{short_id(_line(run.head))}` {md(_against(run))} ({md(run.target.source)})",
        "",
    ]
    if decision.gates:
        lines += ["| state | gate | title | why |", "|---|---|---|---|"]
        for gate in decision.gates:
            state = gate.state.value + (" (blocking)" if gate.blocking else "")
            state += " (warning)" if gate.warning else ""
            why = "; ".join((gate.reason, *gate.notes))
            lines.append(
                f"| {md(state)} | {md(gate.entity_key)} | {md(gate.title or '')} | {md(why)} |"
            )
    else:
        lines.append("No entity in the ledger.")
    if decision.relaxations:
        lines += ["", "### Relaxations", ""]
        for relaxation in decision.relaxations:
            lines.append(f"- {md(_relaxation_message(relaxation)[0])}")
        lines += ["", md(RELAXED_NOTE)]
    for title, problems in (("Errors", decision.errors), ("Warnings", decision.warnings)):
        if problems:
            lines += ["", f"### {title}", ""]
            lines += [f"- {md(p.describe())}" for p in problems]
    if run.notes:
        lines += [""] + [f"- {md(note)}" for note in run.notes]
    lines += ["", f"**{md(verdict)}**", ""]
    return "\n".join(lines)


def error_summary(error: FailgateError) -> str:
    """The step summary when failgate could not decide."""
    lines = ["## failgate: could not decide", "", md(error.message)]
    if error.hint:
        lines += ["", f"hint: {md(error.hint)}"]
    return "\n".join([*lines, ""])


def _write_summary(environ: Mapping[str, str], text: str, stderr: TextIO) -> None:
    """Append to $GITHUB_STEP_SUMMARY; failing to write it never changes the decision."""
    path = environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text + "\n")
    except OSError as exc:
        stderr.write(f"failgate ci: warning: cannot write the step summary: {exc}\n")


def _line(text: str) -> str:
    return sanitize.clean_line(text)


# --------------------------------------------------------------------------- entry point


def main(argv: Sequence[str] | None = None) -> int:
    """`failgate ci [--json]` in the current directory, until the CLI wires it."""
    from failgate_hooks.commands.cli import report_error

    args = list(sys.argv[1:] if argv is None else argv)
    try:
        unknown = [a for a in args if a != "--json"]
        if unknown:
            raise UsageError(f"usage: failgate ci [--json]; unknown {' '.join(unknown)}")
        with GitRepo.open() as repo:
            return run_ci(
                repo, os.environ, stdout=sys.stdout, stderr=sys.stderr, as_json="--json" in args
            )
    except FailgateError as error:
        sys.stdout.flush()
        report_error(error)
        return error.exit_code


__all__ = [
    "CiRun",
    "CiTarget",
    "annotation_lines",
    "decide_ci",
    "escape_data",
    "escape_property",
    "find_target",
    "main",
    "md",
    "run_ci",
    "step_summary",
    "workflow_command",
]
