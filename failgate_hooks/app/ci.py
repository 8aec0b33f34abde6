"""`failgate ci`: the CI gate in one command.

CI finds what it checks in its environment: the commit under test, the base it
is compared with and the destination ref. The base's ledger is the protected
revision, append-only is checked over base..head, and every verifier runs,
trusted, since in CI the repository is the trust boundary. In CI the review is
the authority: relaxing events are accepted, and each one is reported so that
the reviewer sees it.

On GitHub Actions the decision also becomes workflow commands (`::error`,
`::warning`) and a Markdown step summary, rendered by render/github.py.

It prints through the command layer's printer (commands/output.py): there, in a
GitHub Actions step, no line of data can be read as a workflow command, and the
commands render/github.py builds are written as they are.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from failgate_hooks.app.evaluate import Request
from failgate_hooks.core import sanitize
from failgate_hooks.core.ci import CiRun, CiTarget
from failgate_hooks.core.errors import FailgateError, GitError, UsageError
from failgate_hooks.core.events import Problem
from failgate_hooks.core.gates import Context
from failgate_hooks.core.ids import short_id
from failgate_hooks.core.refnames import ref_pattern_problem
from failgate_hooks.git.remotes import ref_commit, remote_default_branch
from failgate_hooks.git.repo import HEX_ID_RE, GitRepo, is_null_id
from failgate_hooks.ledger.appendonly import check_update
from failgate_hooks.ledger.union import Revision, config_for, config_in_force
from failgate_hooks.render import github as github_output
from failgate_hooks.render.ci import render_ci_json, render_ci_text

if TYPE_CHECKING:
    from failgate_hooks.app.attest import Attester

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
    "ci cannot tell which base to compare the commit with: on GitHub Actions run "
    "it on pull_request (GITHUB_BASE_REF) or push events (the push's `before`, read from "
    "GITHUB_EVENT_PATH); elsewhere set FAILGATE_BASE (the revision the change is compared "
    "with, e.g. origin/main) and FAILGATE_REF (the destination ref, e.g. refs/heads/main)"
)
PULL_REQUEST_TARGET_MESSAGE = (
    "ci refuses to run on pull_request_target: it would run the pull request's "
    "verifier code with the base repository's secrets"
)
PULL_REQUEST_TARGET_HINT = "run it on pull_request (see docs/ci/github-actions.yml)"


# --------------------------------------------------------------------------- the environment


def load_event(environ: Mapping[str, str]) -> Mapping[str, Any]:
    """The GitHub event payload at GITHUB_EVENT_PATH, or {} when there is none."""
    path = environ.get("GITHUB_EVENT_PATH")
    if not sanitize.in_github_actions(environ) or not path:
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
    github = sanitize.in_github_actions(environ)
    name = environ.get("GITHUB_EVENT_NAME", "") if github else ""
    if name == "pull_request_target":
        raise UsageError(PULL_REQUEST_TARGET_MESSAGE, hint=PULL_REQUEST_TARGET_HINT)
    found = _github_target(environ, event, name) if github else None
    explicit_head = environ.get(ENV_HEAD)
    head = explicit_head or (environ.get("GITHUB_SHA") if github else None) or "HEAD"
    explicit_base = environ.get(ENV_BASE)
    explicit_ref = environ.get(ENV_REF)
    problem = ref_pattern_problem(explicit_ref) if explicit_ref else None
    if problem is not None:
        raise UsageError(f"{ENV_REF}: {problem}")
    if explicit_base:
        # An explicit base wins: the team said what to compare with.
        github_ref = environ.get("GITHUB_REF") if github else None
        return CiTarget(
            source=ENV_BASE,
            head=head,
            bases=() if is_null_id(explicit_base) else (explicit_base,),
            # The line names the source and the base's id already: a label of either repeats it.
            base_label=ENV_BASE if HEX_ID_RE.match(explicit_base) else explicit_base,
            ref=explicit_ref or (found.ref if found else github_ref),
            new_ref=is_null_id(explicit_base),
            default_branch=found.default_branch if found else None,
        )
    if found is None:
        raise UsageError(NO_BASE_MESSAGE)
    if explicit_ref:
        found = found._replace(ref=explicit_ref)
    return found._replace(head=head)


def _github_target(
    environ: Mapping[str, str], event: Mapping[str, Any], name: str
) -> CiTarget | None:
    """The target a GitHub Actions event names, or None when it names no base."""
    default = _text(event, "repository", "default_branch")
    # The event payload says it too, for a run whose environment lacks it.
    base_branch = environ.get("GITHUB_BASE_REF") or _text(event, "pull_request", "base", "ref")
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


def decide_ci(
    repo: GitRepo,
    environ: Mapping[str, str],
    *,
    sandbox: bool = False,
    attester: Attester | None = None,
) -> CiRun:
    """The gate decision for the commit CI tests, against the base the environment names."""
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
    base = next((c for c in map(_base_commit(repo), target.bases) if c is not None), None)
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
    default_config = None
    if default is not None:
        tracking, commit, branch = default
        extra_protected = (f"refs/heads/{branch}",)
        if commit is not None:
            revisions.append(Revision(tracking, commit, protected=True))
            default_config = config_for(repo, revisions[-1:])
    # A base other than the default branch (release/1) is held to no laxer than it, as
    # the hooks hold a push there.
    config = config_in_force(repo, revisions, default_config)

    old = base
    if base is not None and target.from_merge_base and not repo.is_ancestor(base, head):
        old = _merge_base(repo, base, head)
        notes.append(f"{target.base_label} moved on: checked append-only from the merge base")
    # A new ref: commits the default branch already holds were checked on their way there.
    exclude = [default[1]] if base is None and default is not None and default[1] else []
    history += check_update(repo, old, head, config.ledger, config.max_event_bytes, exclude=exclude)

    request = Request(
        commit=head,
        context=Context(trigger=TRIGGER, ref=target.ref),
        revisions=tuple(revisions),
        # In CI the review is the authority: relaxations apply and are reported.
        authority="accept",
        trust_ledger=True,
        extra_protected_refs=extra_protected,
        history_errors=tuple(history),
    )
    from failgate_hooks.app.runner import decide_with_verifiers

    sandbox_by = "failgate ci --sandbox" if sandbox else None
    decision = decide_with_verifiers(
        repo, config, request, sandbox_by=sandbox_by, attester=attester
    )
    return CiRun(target, head, base, decision, tuple(notes), ledger_dir=config.ledger)


def _base_commit(repo: GitRepo) -> Callable[[str], str | None]:
    """How a base is looked up: a full ref name (the tracking ref of a pull request's
    base) as exactly that ref, which a fetched tag spelling it must not stand in for;
    anything else (a commit id, FAILGATE_BASE) as a revision."""
    return lambda base: (
        ref_commit(repo, base) if base.startswith("refs/") else repo.try_resolve_commit(base)
    )


def _default_branch(
    repo: GitRepo, target: CiTarget, head: str
) -> tuple[str, str | None, str] | None:
    """(tracking ref, commit or None, branch) of the repository's default branch.

    Its ledger counts as protected only while it does not already hold the change
    under test: after a push to it, the clone's tracking ref is the pushed commit
    (or one after it). A new ref cut at a commit the default branch holds (a
    release branch, a tag) is not such a push: the gates recorded on the default
    branch since then hold it, as the client hook says.
    """
    if target.default_branch:
        tracking = f"refs/remotes/{REMOTE}/{target.default_branch}"
        found: tuple[str, str | None] | None = (tracking, ref_commit(repo, tracking))
    else:
        found = remote_default_branch(repo, REMOTE)
    if found is None:
        return None
    tracking, commit = found
    branch = tracking.removeprefix(f"refs/remotes/{REMOTE}/")
    if commit is not None and (
        commit == head or (target.ref == f"refs/heads/{branch}" and repo.is_ancestor(head, commit))
    ):
        commit = None
    return tracking, commit, branch


def _merge_base(repo: GitRepo, base: str, head: str) -> str:
    """Where head's history left base's; base itself when they share none (fails closed)."""
    try:
        return repo.run("merge-base", base, head).split()[0]
    except (GitError, IndexError):
        return base


# --------------------------------------------------------------------------- the output


class Printer(Protocol):
    """Where `failgate ci` prints: the command layer's (commands/output.py:Output).

    `text` and `json` are data, neutralised in a GitHub Actions step; `own_command`
    writes a workflow command render/github.py built, as it is."""

    def text(self, text: str = "", *, err: bool = False, nl: bool = True) -> None: ...

    def json(self, document: str) -> None: ...

    def own_command(self, line: str, *, err: bool = False) -> None: ...


def run_ci(
    repo: GitRepo,
    environ: Mapping[str, str],
    printer: Printer,
    *,
    color: bool = False,
    as_json: bool = False,
    sandbox: bool = False,
    attester: Attester | None = None,
) -> int:
    """`failgate ci`: decide, print, annotate on GitHub; the decision's exit code (0/1/3/4).

    A failure to decide is raised after its annotation: the shell prints its message."""
    github = sanitize.in_github_actions(environ)
    # With --json, stdout is one JSON object: workflow commands go to stderr,
    # which the Actions runner reads for them as well.
    try:
        run = decide_ci(repo, environ, sandbox=sandbox, attester=attester)
    except FailgateError as error:
        if github:
            lines = [error.message, *([f"hint: {error.hint}"] if error.hint else [])]
            annotation = github_output.workflow_command("error", lines)
            printer.own_command(annotation, err=as_json)
            _write_summary(environ, github_output.error_summary(error), printer)
        raise
    if github:
        _write_outputs(environ, run, printer)
    if run.decision is None:
        for note in run.notes:
            printer.text(f"failgate ci: {sanitize.clean_line(note)}")
        return run.exit_code
    if github:
        for line in github_output.annotation_lines(run.decision, run.ledger_dir):
            printer.own_command(line, err=as_json)
        _write_summary(environ, github_output.step_summary(run), printer)
    if as_json:
        printer.json(render_ci_json(run))
    elif github:
        # The free text, between stop-commands markers with a fresh token.
        start, end = github_output.stop_commands_fence()
        printer.own_command(start)
        printer.text(render_ci_text(run, color=color))
        printer.own_command(end)
    else:
        printer.text(render_ci_text(run, color=color))
    return run.exit_code


def _write_outputs(environ: Mapping[str, str], run: CiRun, printer: Printer) -> None:
    """Append the decision and counts to $GITHUB_OUTPUT, for the steps after this one."""
    path = environ.get("GITHUB_OUTPUT")
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.writelines(f"{key}={value}\n" for key, value in run.outputs().items())
    except OSError as exc:
        printer.text(f"failgate ci: warning: cannot write the step outputs: {exc}", err=True)


def _write_summary(environ: Mapping[str, str], text: str, printer: Printer) -> None:
    """Append to $GITHUB_STEP_SUMMARY; failing to write it never changes the decision."""
    path = environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text + "\n")
    except OSError as exc:
        printer.text(f"failgate ci: warning: cannot write the step summary: {exc}", err=True)
