"""The commands of signed evidence: attest, and evidence push / fetch."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import click

from failgate_hooks.commands.environment import trust_ledger_requested
from failgate_hooks.commands.output import echo
from failgate_hooks.commands.shell import (
    F,
    destination_options,
    json_option,
    open_repo,
    print_decision,
    sandbox_option,
)
from failgate_hooks.core.sanitize import clean_line

if TYPE_CHECKING:
    from failgate_hooks.app.attest import Attested, Attester
    from failgate_hooks.git.repo import GitRepo


def key_option(func: F) -> F:
    return click.option(
        "--key",
        "key_file",
        type=click.Path(dir_okay=False),
        help="The private SSH key that signs (else the FAILGATE_EVIDENCE_KEY variable's text).",
    )(func)


def attester_from(key_file: str | None, run_url: str | None, repository: str | None) -> Attester:
    """The attester, its key taken out of this process's environment before anything runs."""
    from failgate_hooks.app.attest import Attester
    from failgate_hooks.verify.signing import KEY_VARIABLE

    attester = Attester.from_environment(
        key_file, os.environ, repository=repository, run_url=run_url
    )
    os.environ.pop(KEY_VARIABLE, None)  # no git or verifier process started later inherits it
    return attester


def report_attested(made: list[Attested], commit: str | None) -> None:
    """One line per statement, on standard error, and where they were recorded."""
    from failgate_hooks.git.evidence import EVIDENCE_REF

    for item in made:
        echo(
            f"attested {clean_line(item.entity_key)} on {item.content} "
            f"(signed by {clean_line(item.fingerprint)})",
            err=True,
        )
    if commit is None:
        echo("failgate: no verifier passed here: nothing attested", err=True)
    else:
        echo(
            f"failgate: {len(made)} statement(s) in {EVIDENCE_REF} ({commit[:12]}); "
            "share them with `failgate evidence push`",
            err=True,
        )


def share_attested(repo: GitRepo, attester: Attester) -> None:
    """`ci --attest`: record the statements and push them to origin, merging when others
    pushed too."""
    from failgate_hooks.app.attest import record_statements
    from failgate_hooks.app.evidence_store import push_evidence

    commit, made = record_statements(repo, attester)
    report_attested(made, commit)
    if commit is not None:
        push_evidence(repo, "origin")
        echo("failgate: evidence pushed to origin", err=True)


@click.command()
@click.option("--rev", default="HEAD", show_default=True, help="The commit to attest.")
@destination_options
@key_option
@click.option("--run-url", help="The page of the run that attests (CI sets it on GitHub).")
@click.option("--repository", help="The repository's name, as statements record it.")
@click.option("--trust-ledger", is_flag=True, help="Trust every verifier in the ledger.")
@sandbox_option
@json_option
@click.pass_context
def attest(
    ctx: click.Context,
    rev: str,
    ref: str | None,
    environment: str | None,
    ledger_revs: tuple[str, ...],
    key_file: str | None,
    run_url: str | None,
    repository: str | None,
    trust_ledger: bool,
    sandbox: bool,
    as_json: bool,
) -> None:
    """Run REV's verifiers afresh in the sandbox and sign a statement for each that passes.

    The pass cache is not read: a statement says what ran here, in the sandbox,
    so the key stays out of the verifier's reach. Statements go to
    refs/failgate/evidence; `failgate evidence push` shares them."""
    from failgate_hooks.app.attest import record_statements
    from failgate_hooks.app.check import run_check

    attester = attester_from(key_file, run_url, repository)
    with open_repo(ctx) as repo:
        decision, _ = run_check(
            repo,
            trigger="push",
            rev=rev,
            ref=ref,
            environment=environment,
            ledger_revs=ledger_revs,
            range_=None,
            authority="accept",
            no_cache=True,
            trust_ledger=trust_ledger or trust_ledger_requested(os.environ),
            sandbox=sandbox,
            attester=attester,
        )
        commit, made = record_statements(repo, attester)
    print_decision(decision, as_json, verbose=False)
    report_attested(made, commit)
    ctx.exit(decision.exit_code)


@click.group()
def evidence() -> None:
    """Share signed evidence: refs/failgate/evidence, and each remote's copy."""


@evidence.command()
@click.argument("remote", default="origin")
@click.pass_context
def push(ctx: click.Context, remote: str) -> None:
    """Push the local statements to REMOTE, merging its copy in when both moved."""
    from failgate_hooks.app.evidence_store import push_evidence

    with open_repo(ctx) as repo:
        commit = push_evidence(repo, remote)
    echo(f"failgate: evidence pushed to {clean_line(remote)} ({commit[:12]})")


@evidence.command()
@click.argument("remote", default="origin")
@click.pass_context
def fetch(ctx: click.Context, remote: str) -> None:
    """Fetch REMOTE's statements into refs/failgate/remotes/REMOTE/evidence."""
    from failgate_hooks.app.evidence_store import fetch_evidence
    from failgate_hooks.git.evidence import tracking_ref

    with open_repo(ctx) as repo:
        commit = fetch_evidence(repo, remote)
    if commit is None:
        echo(f"failgate: {clean_line(remote)} has no evidence yet")
    else:
        echo(f"failgate: {clean_line(tracking_ref(remote))} is at {commit[:12]}")


COMMANDS = [attest, evidence]
