"""The commands that run verifiers: check, try, ci and replay."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import click

from failgate_hooks.commands.environment import trust_ledger_requested
from failgate_hooks.commands.evidence import attester_from, key_option, share_attested
from failgate_hooks.commands.output import echo, echo_json, output
from failgate_hooks.commands.shell import (
    destination_options,
    emit_json,
    json_option,
    open_repo,
    print_decision,
    sandbox_option,
    trigger_option,
    verbose_option,
)
from failgate_hooks.core import exitcodes
from failgate_hooks.core.sanitize import clean_line


@click.command()
@trigger_option
@click.option("--rev", default="HEAD", show_default=True, help="The commit to check.")
@destination_options
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
        echo(f"warning: {clean_line(warning)}", err=True)
    print_decision(decision, as_json, verbose=verbose)
    ctx.exit(decision.exit_code)


@click.command(name="try")
@click.argument("key")
@json_option
@click.pass_context
def try_(ctx: click.Context, key: str, as_json: bool) -> None:
    """Run KEY's verifier on the work tree as it is (never caches, clears or records)."""
    from failgate_hooks.app.review import entity_verification
    from failgate_hooks.app.runner import progress_line
    from failgate_hooks.core.decide import verifier_reason
    from failgate_hooks.core.gates import VerifierOutcome
    from failgate_hooks.ledger.union import inspection_config
    from failgate_hooks.render.text import render_tail
    from failgate_hooks.verify.execute import run_in_worktree

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
    if as_json:
        from failgate_hooks.render.text import verifier_json

        doc = {"schema_version": 1, "entity_key": key, "passed": passed}
        emit_json({**doc, "verifier": verifier_json(result)})
        ctx.exit(exitcodes.ALLOWED if passed else exitcodes.HELD)
    echo(f"{'PASS' if passed else 'FAIL'} {clean_line(key)}: {clean_line(verifier_reason(result))}")
    # The reason ends with the result's detail (that try never clears a gate): once.
    for line in render_tail(result.output_tail):
        echo(line)
    ctx.exit(exitcodes.ALLOWED if passed else exitcodes.HELD)


@click.command()
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
@sandbox_option
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
    sandbox: bool,
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
            sandbox_by="failgate replay --sandbox" if sandbox else None,
        )
    if sys.stderr.isatty():
        echo("", err=True)
    if receipt:
        with open(receipt, "w", encoding="utf-8") as handle:
            handle.write(render_receipt(report))
    if as_json:
        echo_json(render_replay_json(report))
    else:
        echo(render_replay_text(report))
    ctx.exit(exitcodes.ALLOWED if report.ok else exitcodes.HELD)


def _progress_bar() -> Callable[[int, int, str], None]:
    """A one-line bar on standard error while verifiers run (terminals only)."""

    def draw(position: int, total: int, commit: str) -> None:
        width = 24
        done = width * (position - 1) // max(total, 1)
        bar = "#" * done + "." * (width - done)
        echo(f"\r[{bar}] {position}/{total} {commit[:12]}", err=True, nl=False)

    return draw


@click.command()
@sandbox_option
@click.option(
    "--attest",
    is_flag=True,
    help="Sign a statement for each verifier that passes, and push it (needs the sandbox).",
)
@key_option
@json_option
@click.pass_context
def ci(
    ctx: click.Context, sandbox: bool, attest: bool, key_file: str | None, as_json: bool
) -> None:
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

    attester = attester_from(key_file, None, None) if attest else None
    with open_repo(ctx) as repo:
        code = run_ci(
            repo,
            os.environ,
            output(),
            color=sys.stdout.isatty(),
            as_json=as_json,
            sandbox=sandbox,
            attester=attester,
        )
        if attester is not None:
            share_attested(repo, attester)
    ctx.exit(code)


COMMANDS = [check, try_, ci, replay]
