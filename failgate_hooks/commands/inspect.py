"""The commands that read and report, running no verifier: log, fsck, gates, export, doctor."""

from __future__ import annotations

import os

import click

from failgate_hooks.commands.environment import trust_ledger_requested
from failgate_hooks.commands.output import echo, echo_json
from failgate_hooks.commands.shell import (
    destination_ref_option,
    emit_json,
    json_option,
    open_repo,
    print_decision,
    trigger_option,
    verbose_option,
)
from failgate_hooks.core import exitcodes
from failgate_hooks.core.errors import UsageError
from failgate_hooks.core.sanitize import clean_line


@click.command()
@click.argument("key")
@json_option
@click.pass_context
def log(ctx: click.Context, key: str, as_json: bool) -> None:
    """KEY's events in resolution order, superseded and heads marked, and its gate's state.

    The state is the one `gates` shows for a push to an unknown ref: no verifier runs."""
    from failgate_hooks.app.report import report
    from failgate_hooks.render.text import log_json, log_lines

    with open_repo(ctx) as repo:
        found = report(repo, trust_ledger=trust_ledger_requested(os.environ))
    if key not in found.ledger.entity_keys:
        raise UsageError(
            f"no entity {key!r} in the committed ledger (HEAD)",
            hint="failgate gates lists the entities; an event not yet committed is not read",
        )
    resolution, gate = found.ledger.resolve(key), found.gate(key)
    if as_json:
        echo_json(log_json(resolution, gate))
    else:
        echo("\n".join(log_lines(resolution, gate, found.decision)))


# ---------------------------------------------------------------------------- fsck


@click.command()
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
            echo(f"ERROR {clean_line(problem.describe())}")
        for hint in report.hints:
            echo(f"hint: {clean_line(hint)}")
        echo(clean_line(report.summary()))
    ctx.exit(exitcodes.ALLOWED if report.ok else exitcodes.INTEGRITY)


@click.command()
@trigger_option
@click.option("--rev", default="HEAD", show_default=True, help="The commit to evaluate.")
@destination_ref_option
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
    """Show each gate's state at REV as check decides it, without running any verifier.

    Signed evidence and a pass cached on this machine count; with neither, "not run".
    Exits as check would with those answers (0/1/3/4)."""
    from failgate_hooks.app.report import report

    with open_repo(ctx) as repo:
        found = report(
            repo,
            rev=rev,
            trigger=trigger,
            ref=ref,
            environment=environment,
            trust_ledger=trust_ledger_requested(os.environ),
        )
    print_decision(found.decision, as_json, verbose=verbose, advice=GATES_ADVICE)
    ctx.exit(found.decision.exit_code)


# what to do when no protected revision was read: the remote's default branch is one
GATES_ADVICE = (
    "gates reads the remote's default branch too once this repository has it (push it, "
    "or fetch it); --verbose lists them"
)


@click.command()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["markdown", "json"]),
    default="markdown",
    show_default=True,
    help="Markdown for a coding agent's context, or JSON.",
)
@click.option("--rev", default="HEAD", show_default=True, help="The revision to export.")
@json_option
@click.pass_context
def export(ctx: click.Context, fmt: str, rev: str, as_json: bool) -> None:
    """Every entity with its state, reason and lifecycle; free text fenced as data.

    --json is --format json. States are the ones gates shows for a push to an unknown ref."""
    from failgate_hooks.app import export as exporting
    from failgate_hooks.render.export import render_export_json, render_export_markdown

    with open_repo(ctx) as repo:
        report = exporting.export_ledger(
            repo, rev=rev, trust_ledger=trust_ledger_requested(os.environ)
        )
    if as_json or fmt == "json":
        echo_json(render_export_json(report))
    else:
        echo(render_export_markdown(report))


@click.command()
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
        emit_json({"findings": [f._asdict() for f in findings]})
    else:
        for finding in findings:
            label = "OK  " if finding.ok else "TODO"
            echo(f"{label} {finding.topic}: {clean_line(finding.text)}")
    ctx.exit(exitcodes.ALLOWED if all(f.ok for f in findings) else exitcodes.HELD)


COMMANDS = [log, fsck, gates, export, doctor]
