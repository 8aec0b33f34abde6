"""The click shell: parse, call, render, exit. No decisions are made here."""

from __future__ import annotations

import datetime as dt
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import click

from failgate_hooks import __version__

# The hooks' entry points live in hookmain, which imports no click; cli names them
# too for hook scripts written by earlier versions (`from failgate_hooks.commands.cli import …`).
from failgate_hooks.commands.environment import trust_ledger_requested
from failgate_hooks.commands.hooks import error_lines, pre_push_main, pre_receive_main
from failgate_hooks.commands.signals import ended_by_signals
from failgate_hooks.core import exitcodes
from failgate_hooks.core.errors import FailgateError, UsageError
from failgate_hooks.core.sanitize import clean_line

__all__ = ["main", "pre_push_main", "pre_receive_main", "run"]

F = TypeVar("F", bound=Callable[..., Any])


def report_error(error: FailgateError) -> None:
    """One clean message on standard error: what, where, and what to do."""
    for line in error_lines(error):
        click.echo(line, err=True)


class FailgateGroup(click.Group):
    """Turns every expected failure into its message and exit code, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except FailgateError as error:
            report_error(error)
            ctx.exit(error.exit_code)


@click.group(cls=FailgateGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "-C",
    "directory",
    type=click.Path(file_okay=False),
    default=".",
    help="Run as if failgate was started in DIR (like git -C).",
)
@click.version_option(__version__, prog_name="failgate")
@click.pass_context
def main(ctx: click.Context, directory: str) -> None:
    """failgate: refuse the push while a recorded failure's gate is held.

    A failure is recorded as an event in the ledger; a push is refused until a
    reviewed verifier passes on the exact commit being pushed.
    """
    ctx.obj = directory


def run() -> None:
    """The `failgate` program (its console script, and `python -m failgate_hooks`)."""
    with ended_by_signals():
        main(prog_name="failgate")


@contextmanager
def open_repo(ctx: click.Context) -> Iterator[Any]:
    """The repository failgate was started in (or -C DIR), closed afterwards."""
    from failgate_hooks.git.repo import GitRepo

    repo = GitRepo.open(ctx.find_root().obj or ".")
    try:
        yield repo
    finally:
        repo.close()


def json_option(func: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")(func)


def emit_json(payload: object) -> None:
    import json

    from failgate_hooks.core.sanitize import clean_tree

    click.echo(json.dumps(clean_tree(payload), indent=2, sort_keys=False))


def parse_time(value: str | None) -> dt.datetime | None:
    if value is None:
        return None
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"--effective-at {value!r}: expected an ISO time like 2026-11-29T23:05:00Z"
        ) from None
    if moment.tzinfo is None:
        raise UsageError(f"--effective-at {value!r}: give an offset, e.g. Z or +01:00")
    return moment


# ---------------------------------------------------------------------------- record & co


def _write(ctx: click.Context, build: Callable[[Any], Any], *, probe: bool = False) -> None:
    """Shared tail of record/confirm/expire: write, warn, print the path last."""
    from failgate_hooks.ledger.write import git_identity, write_event

    with open_repo(ctx) as repo:
        from failgate_hooks.ledger.union import inspection_config

        config = inspection_config(repo)
        draft = build(repo)
        written = write_event(repo, config, draft, recorded_by=git_identity(repo))
        for warning in written.warnings:
            click.echo(f"warning: {clean_line(warning)}", err=True)
        for warning in _after_record(repo, config, written, probe=probe):
            click.echo(f"warning: {clean_line(warning)}", err=True)
        root = repo.working_dir or "."
        click.echo(os.path.relpath(written.path, root))


def _after_record(repo: Any, config: Any, written: Any, *, probe: bool) -> list[str]:
    """What only warns: pinned files not committed, a verifier that already passes.

    `record` also trusts the verifier it writes: the person recording it wrote it.
    """
    from failgate_hooks.app import review as verifiers
    from failgate_hooks.core.events import Status

    event = written.event
    verification = event.verification
    if verification is None:
        return []
    warnings = []
    head = repo.try_resolve_commit("HEAD")
    committed = {e.path for e in repo.ls_tree(head)} if head and verification.files else set()
    warnings += [
        f"pinned verifier file {path} is not committed at HEAD: commit it with the event"
        for path in verification.files
        if path not in committed and not any(c.startswith(f"{path}/") for c in committed)
    ]
    untrusted = verifiers.trust_recorded(repo, event, event.recorded_by or "failgate record")
    warnings += [untrusted] if untrusted else []
    if probe and event.status is Status.OBSERVED:
        passes = verifiers.probe(repo, config, event)
        warnings += [passes] if passes else []
    return warnings


@main.command()
@click.argument("key")
@click.option(
    "--status",
    type=click.Choice([s for s in ("observed", "diagnosed", "mitigated", "verified", "expired")]),
    required=True,
    help="The entity's lifecycle status after this event.",
)
@click.option("--title", help="One line naming the risk (required for a new entity).")
@click.option(
    "--trigger",
    "triggers",
    multiple=True,
    help="An action that must check this entity: push, deploy, … (required for a new entity).",
)
@click.option("--since", help="Applies to this commit and its descendants.")
@click.option(
    "--path",
    "paths",
    multiple=True,
    help="Applies when the commit's tree has a file matching this glob.",
)
@click.option("--ref", "refs", multiple=True, help="Applies to pushes to refs matching this glob.")
@click.option("--env", "environments", multiple=True, help="Applies in this environment.")
@click.option(
    "--verify", help="The verifier command (split like a shell would; never run through one)."
)
@click.option(
    "--verify-file",
    "verify_files",
    multiple=True,
    help="A file of the verifier, or a folder pinned whole, taken from the reviewed revision.",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=click.IntRange(min=1),
    help="Seconds before the verifier is killed.",
)
@click.option(
    "--input",
    "inputs",
    multiple=True,
    help="Glob of files the verifier reads (narrows the cache key).",
)
@click.option(
    "--supersedes", multiple=True, help="Id of an event this one replaces (its keys carry forward)."
)
@click.option("--retracts", multiple=True, help="Id of an event whose file may be deleted.")
@click.option("--note", help="Free text: what was seen.")
@click.option(
    "--effective-at",
    help="When it happened, ISO 8601 with offset (for people; never orders events).",
)
@click.option(
    "--no-probe", is_flag=True, help="Do not run the verifier on HEAD for an observed event."
)
@click.option(
    "--force",
    is_flag=True,
    help="Record --verify as written, even with shell operators or a program not found.",
)
@click.pass_context
def record(
    ctx: click.Context,
    key: str,
    status: str,
    title: str | None,
    triggers: tuple[str, ...],
    since: str | None,
    paths: tuple[str, ...],
    refs: tuple[str, ...],
    environments: tuple[str, ...],
    verify: str | None,
    verify_files: tuple[str, ...],
    timeout_s: int | None,
    inputs: tuple[str, ...],
    supersedes: tuple[str, ...],
    retracts: tuple[str, ...],
    note: str | None,
    effective_at: str | None,
    no_probe: bool,
    force: bool,
) -> None:
    """Record one new event for KEY; print the new file's path last."""
    from failgate_hooks.core.events import Status
    from failgate_hooks.ledger.write import EventDraft, check_paths

    check_paths(verify_files, "--verify-file")

    def build(repo: Any) -> EventDraft:
        from failgate_hooks.app.verifier_command import verifier_argv

        argv: tuple[str, ...] = ()
        if verify is not None:
            argv = verifier_argv(verify, root=repo.working_dir, environ=os.environ, force=force)
        return EventDraft(
            entity_key=key,
            status=Status(status),
            title=title,
            triggers=triggers,
            since=repo.resolve_commit(since) if since else None,
            paths=paths,
            refs=refs,
            environments=environments,
            verify=argv,
            verify_files=verify_files,
            timeout_s=timeout_s,
            inputs=inputs,
            supersedes=supersedes,
            retracts=retracts,
            note=note,
            effective_at=parse_time(effective_at),
        )

    _write(ctx, build, probe=not no_probe and verify is not None)


@main.command()
@click.argument("key")
@click.option("--commit", "rev", required=True, help="The commit whose content a person confirms.")
@click.option("--note", required=True, help="What was checked, and how.")
@click.option("--by", "by", help="Who confirmed it (default: git config user).")
@click.pass_context
def confirm(ctx: click.Context, key: str, rev: str, note: str, by: str | None) -> None:
    """Record human evidence that REV's content is safe for KEY."""
    from failgate_hooks.core.events import Evidence, EvidenceKind, Status
    from failgate_hooks.ledger.write import EventDraft, git_identity

    def build(repo: Any) -> EventDraft:
        who = by or git_identity(repo)
        if not who:
            raise UsageError("say who confirms with --by NAME (git config user.name is unset)")
        return EventDraft(
            entity_key=key,
            status=Status.VERIFIED,
            note=note,
            evidence=Evidence(
                kind=EvidenceKind.HUMAN, commit=repo.resolve_commit(rev), confirmed_by=who
            ),
        )

    _write(ctx, build)


@main.command()
@click.argument("key")
@click.option("--note", required=True, help="Why the risk no longer exists.")
@click.pass_context
def expire(ctx: click.Context, key: str, note: str) -> None:
    """Record that KEY's risk no longer exists (its gate retires)."""
    from failgate_hooks.core.events import Status
    from failgate_hooks.ledger.write import EventDraft

    _write(ctx, lambda repo: EventDraft(entity_key=key, status=Status.EXPIRED, note=note))


@main.command()
@click.argument("key")
@json_option
@click.pass_context
def log(ctx: click.Context, key: str, as_json: bool) -> None:
    """KEY's events in resolution order, superseded and heads marked, and its state."""
    from failgate_hooks.app.review import inspection_ledger
    from failgate_hooks.ledger.union import inspection_config
    from failgate_hooks.render.text import log_json, log_lines

    with open_repo(ctx) as repo:
        ledger, _ = inspection_ledger(repo, inspection_config(repo))
    if key not in ledger.entity_keys:
        raise UsageError(f"no entity {key!r} in the committed ledger (HEAD)")
    resolution = ledger.resolve(key)
    click.echo(log_json(resolution) if as_json else "\n".join(log_lines(resolution)))


# ---------------------------------------------------------------------------- fsck


@main.command()
@click.option(
    "--rev", default="HEAD", show_default=True, help="The revision whose ledger is validated."
)
@click.option(
    "--range", "range_", metavar="A..B", help="Also check append-only over the commits in A..B."
)
@json_option
@click.pass_context
def fsck(ctx: click.Context, rev: str, range_: str | None, as_json: bool) -> None:
    """Validate the ledger at REV and list every problem; exit 0 or 4."""
    from failgate_hooks.ledger.fsck import run_fsck

    with open_repo(ctx) as repo:
        report = run_fsck(repo, rev, range_)
    if as_json:
        emit_json(report.to_json())
    else:
        for problem in report.problems:
            click.echo(f"ERROR {clean_line(problem.describe())}")
        click.echo(clean_line(report.summary()))
    ctx.exit(exitcodes.ALLOWED if report.ok else exitcodes.INTEGRITY)


# ---------------------------------------------------------------------------- decisions


def trigger_option(func: F) -> F:
    return click.option(
        "--trigger", default="push", show_default=True, help="The action being checked."
    )(func)


def sandbox_option(func: F) -> F:
    return click.option(
        "--sandbox",
        is_flag=True,
        help="Run verifiers in bubblewrap: no home, work tree or network (needs bwrap).",
    )(func)


def verbose_option(func: F) -> F:
    return click.option(
        "--verbose", is_flag=True, help="List every relaxation, even with no protected revision."
    )(func)


def print_decision(
    decision: Any, as_json: bool, *, verbose: bool, advice: str | None = None
) -> None:
    """The decision on standard output; `advice` replaces check's when nothing is protected."""
    from failgate_hooks.render.text import CHECK_ADVICE, render_json, render_text

    if as_json:
        click.echo(render_json(decision))
    else:
        text = render_text(
            decision,
            color=sys.stdout.isatty(),
            verbose=verbose,
            unprotected_advice=advice or CHECK_ADVICE,
        )
        click.echo(text)


@main.command()
@trigger_option
@click.option("--rev", default="HEAD", show_default=True, help="The commit to evaluate.")
@click.option("--ref", help="The destination ref (unknown when absent: gates block).")
@click.option("--env", "environment", help="The environment (e.g. mainnet).")
@verbose_option
@json_option
@click.pass_context
def gates(
    ctx: click.Context,
    trigger: str,
    rev: str,
    ref: str | None,
    environment: str | None,
    verbose: bool,
    as_json: bool,
) -> None:
    """Show each gate's state at REV, without running any verifier."""
    from failgate_hooks.app.evaluate import Evaluator, Request
    from failgate_hooks.core.gates import Context
    from failgate_hooks.ledger.union import Revision, inspection_config

    with open_repo(ctx) as repo:
        commit = repo.resolve_commit(rev)
        config = inspection_config(repo)
        request = Request(
            commit=commit,
            context=Context(trigger=trigger, ref=ref, environment=environment),
            revisions=(Revision(rev, commit),),
            run_verifiers=False,
        )
        decision = Evaluator(repo, config).evaluate(request)
    print_decision(decision, as_json, verbose=verbose, advice=GATES_ADVICE)


# gates reads REV's ledger alone: no revision of it is ever protected
GATES_ADVICE = (
    "gates reads REV alone, failgate check the protected revisions too; --verbose lists them"
)


@main.command()
@trigger_option
@click.option("--rev", default="HEAD", show_default=True, help="The commit to check.")
@click.option("--ref", help="The destination ref (unknown when absent: gates block).")
@click.option("--env", "environment", help="The environment (e.g. mainnet).")
@click.option(
    "--ledger-rev",
    "ledger_revs",
    multiple=True,
    help="Also read the ledger at this protected revision (repeatable).",
)
@click.option("--range", "range_", metavar="A..B", help="Also check append-only over A..B.")
@click.option(
    "--authority",
    type=click.Choice(["accept", "protected"]),
    default="accept",
    show_default=True,
    help="Whether relaxing events outside a protected revision apply.",
)
@click.option("--no-cache", is_flag=True, help="Run verifiers even when a pass is cached.")
@click.option(
    "--trust-ledger",
    is_flag=True,
    help="Trust every verifier in the ledger (CI, servers; also FAILGATE_TRUST_LEDGER=1).",
)
@verbose_option
@sandbox_option
@json_option
@click.pass_context
def check(
    ctx: click.Context,
    trigger: str,
    rev: str,
    ref: str | None,
    environment: str | None,
    ledger_revs: tuple[str, ...],
    range_: str | None,
    authority: str,
    no_cache: bool,
    trust_ledger: bool,
    verbose: bool,
    sandbox: bool,
    as_json: bool,
) -> None:
    """Decide whether TRIGGER may proceed for REV, running verifiers (exit 0/1/3/4)."""
    from failgate_hooks.app.check import run_check

    with open_repo(ctx) as repo:
        decision, warnings = run_check(
            repo,
            trigger=trigger,
            rev=rev,
            ref=ref,
            environment=environment,
            ledger_revs=ledger_revs,
            range_=range_,
            authority=authority,
            no_cache=no_cache,
            trust_ledger=trust_ledger or trust_ledger_requested(os.environ),
            sandbox=sandbox,
        )

    for warning in warnings:
        click.echo(f"warning: {clean_line(warning)}", err=True)
    print_decision(decision, as_json, verbose=verbose)
    ctx.exit(decision.exit_code)


@main.command(name="try")
@click.argument("key")
@click.pass_context
def try_(ctx: click.Context, key: str) -> None:
    """Run KEY's verifier on the work tree as it is (never caches, clears or records)."""
    from failgate_hooks.app.review import entity_verification
    from failgate_hooks.app.runner import progress_line
    from failgate_hooks.core.decide import verifier_reason
    from failgate_hooks.core.gates import VerifierOutcome
    from failgate_hooks.ledger.union import inspection_config
    from failgate_hooks.render.text import render_tail
    from failgate_hooks.verify.run import run_in_worktree

    with open_repo(ctx) as repo:
        config = inspection_config(repo)
        verification = entity_verification(repo, config, key)
        result = run_in_worktree(
            repo,
            entity_key=key,
            verification=verification,
            default_timeout_s=config.default_timeout_s,
            progress=progress_line,
        )
    passed = result.outcome is VerifierOutcome.PASSED
    click.echo(
        f"{'PASS' if passed else 'FAIL'} {clean_line(key)}: {clean_line(verifier_reason(result))}"
    )
    for line in render_tail(result.output_tail):
        click.echo(line)
    if result.detail:
        click.echo(f"     {clean_line(result.detail)}")
    ctx.exit(exitcodes.ALLOWED if passed else exitcodes.HELD)


@main.command()
@click.option("--all", "show_all", is_flag=True, help="List trusted verifiers too.")
@click.option("--yes", is_flag=True, help="Approve every listed verifier without asking.")
@click.pass_context
def trust(ctx: click.Context, show_all: bool, yes: bool) -> None:
    """Review the verifiers this machine does not trust yet, and approve them."""
    from failgate_hooks.app import review as verifiers
    from failgate_hooks.ledger.union import inspection_config
    from failgate_hooks.ledger.write import git_identity

    with open_repo(ctx) as repo:
        found = verifiers.candidates(repo, inspection_config(repo))
        for candidate in found if show_all else [c for c in found if not c.trusted]:
            for line in verifiers.describe(repo, candidate):
                click.echo(line)
        pending = verifiers.to_approve(found)
        if not pending:
            everything = "" if any(not c.trusted for c in found) else ": every verifier is trusted"
            click.echo(f"trust: nothing to approve{everything}")
            return
        if not yes and not sys.stdin.isatty():
            # click.confirm would read end-of-file and print a bare "Aborted!"
            click.echo(
                f"trust: nothing approved: no terminal to ask on. Review the {len(pending)} "
                "verifier(s) above, then approve them with `failgate trust --yes`"
            )
            ctx.exit(exitcodes.HELD)
        if not yes and not click.confirm(
            f"Trust these {len(pending)} verifier(s) on this machine?", default=False
        ):
            click.echo("trust: nothing approved")
            ctx.exit(exitcodes.HELD)
        verifiers.approve(repo, pending, git_identity(repo) or "unknown")
    click.echo(f"trust: approved {len(pending)} verifier(s)")


@main.command()
@click.pass_context
def demo(ctx: click.Context) -> None:
    """Show, with real pushes in a throwaway repository, a gate refusing then allowing."""
    from failgate_hooks.app.demo import run_demo

    ctx.exit(run_demo(click.echo))


@main.command()
@click.argument("interval", metavar="PARENT..REPAIR")
@click.option("--entity", "entity_key", required=True, help="The entity whose gate is replayed.")
@click.option("--trigger", default="push", show_default=True, help="The trigger replayed.")
@click.option(
    "--ledger-rev",
    default="HEAD",
    show_default=True,
    help="Where the event and its pinned verifier files are read from.",
)
@click.option("--direct", is_flag=True, help="Require REPAIR's first parent to be PARENT.")
@click.option("--expect-files", help="Comma-separated files the repair must change, exactly these.")
@click.option(
    "--receipt", type=click.Path(dir_okay=False), help="Write a Markdown receipt to this file."
)
@json_option
@click.pass_context
def replay(
    ctx: click.Context,
    interval: str,
    entity_key: str,
    trigger: str,
    ledger_rev: str,
    direct: bool,
    expect_files: str | None,
    receipt: str | None,
    as_json: bool,
) -> None:
    """Prove a gate on history: held at PARENT, cleared at REPAIR (exit 0, else 1)."""
    from failgate_hooks.app import replay as replaying
    from failgate_hooks.ledger.union import inspection_config
    from failgate_hooks.render.replay import render_receipt, render_replay_json, render_replay_text

    expected = None
    if expect_files is not None:
        expected = [f.strip() for f in expect_files.split(",") if f.strip()]
    with open_repo(ctx) as repo:
        report = replaying.replay(
            repo,
            interval,
            entity_key,
            trigger=trigger,
            ledger_rev=ledger_rev,
            direct=direct,
            expect_files=expected,
            default_timeout_s=inspection_config(repo).default_timeout_s,
            progress=_progress_bar() if sys.stderr.isatty() else None,
        )
    if sys.stderr.isatty():
        click.echo("", err=True)
    if receipt:
        with open(receipt, "w", encoding="utf-8") as handle:
            handle.write(render_receipt(report))
    click.echo(render_replay_json(report) if as_json else render_replay_text(report))
    ctx.exit(exitcodes.ALLOWED if report.ok else exitcodes.HELD)


def _progress_bar() -> Callable[[int, int, str], None]:
    """A one-line bar on standard error while verifiers run (terminals only)."""

    def draw(position: int, total: int, commit: str) -> None:
        width = 24
        done = width * (position - 1) // max(total, 1)
        bar = "#" * done + "." * (width - done)
        click.echo(f"\r[{bar}] {position}/{total} {commit[:12]}", err=True, nl=False)

    return draw


@main.command()
@sandbox_option
@json_option
@click.pass_context
def ci(ctx: click.Context, sandbox: bool, as_json: bool) -> None:
    """The CI gate: decide for the commit CI tests, against its base (exit 0/1/3/4).

    \b
    It reads, on GitHub Actions (GITHUB_ACTIONS=true):
      GITHUB_EVENT_NAME, GITHUB_EVENT_PATH (the event payload: a push's
      before, a pull request's base), GITHUB_SHA, GITHUB_REF, GITHUB_BASE_REF;
      and writes GITHUB_STEP_SUMMARY, GITHUB_OUTPUT (decision, open, cleared,
      conflict, invalid) and ::error / ::warning annotations.
    Anywhere, and winning over GitHub's:
      FAILGATE_BASE  the revision the change is compared with
      FAILGATE_REF   the destination ref
      FAILGATE_HEAD  the commit under test (default HEAD)
    """
    from failgate_hooks.app.ci import run_ci

    with open_repo(ctx) as repo:
        code = run_ci(
            repo, os.environ, stdout=sys.stdout, stderr=sys.stderr, as_json=as_json, sandbox=sandbox
        )
    ctx.exit(code)


@main.command()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["markdown", "json"]),
    default="markdown",
    show_default=True,
    help="Markdown for a coding agent's context, or JSON.",
)
@click.option("--rev", default="HEAD", show_default=True, help="The revision to export.")
@click.pass_context
def export(ctx: click.Context, fmt: str, rev: str) -> None:
    """Every entity with its state, reason and lifecycle; free text fenced as data."""
    from failgate_hooks.app import export as exporting
    from failgate_hooks.ledger.union import inspection_config
    from failgate_hooks.render.export import render_export_json, render_export_markdown

    with open_repo(ctx) as repo:
        report = exporting.export_ledger(repo, inspection_config(repo), rev=rev)
    if fmt == "json":
        click.echo(render_export_json(report))
    else:
        click.echo(render_export_markdown(report))


# ---------------------------------------------------------------------------- hooks


@main.command()
@click.option("--chain", is_flag=True, help="Keep an existing pre-push hook and run it first.")
@click.pass_context
def install(ctx: click.Context, chain: bool) -> None:
    """Install failgate as this repository's plain git pre-push hook."""
    from failgate_hooks.app import install as installer

    with open_repo(ctx) as repo:
        path = installer.install(repo, chain=chain)
    click.echo(f"failgate pre-push hook installed at {path}")


@main.command()
@click.pass_context
def uninstall(ctx: click.Context) -> None:
    """Remove failgate's pre-push hook (only its own; a chained one is restored)."""
    from failgate_hooks.app import install as installer

    with open_repo(ctx) as repo:
        click.echo(installer.uninstall(repo))


@main.command()
@json_option
@click.pass_context
def doctor(ctx: click.Context, as_json: bool) -> None:
    """Whether failgate is set up here: the hook, pre-commit, config, trust, sandbox.

    Each line is OK or says what to do; exit 1 when something needs doing.
    """
    from failgate_hooks.app.doctor import diagnose

    with open_repo(ctx) as repo:
        findings = diagnose(repo)
    if as_json:
        emit_json({"findings": [f.__dict__ for f in findings]})
    else:
        for finding in findings:
            label = "OK  " if finding.ok else "TODO"
            click.echo(f"{label} {finding.topic}: {clean_line(finding.text)}")
    ctx.exit(exitcodes.ALLOWED if all(f.ok for f in findings) else exitcodes.HELD)


from failgate_hooks.commands.agent import register as register_agent_commands  # noqa: E402

register_agent_commands(main)
