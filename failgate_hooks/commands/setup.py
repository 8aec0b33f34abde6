"""Setting failgate up on a machine: trust, install, uninstall, and the demo."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from failgate_hooks.commands.output import echo
from failgate_hooks.commands.shell import (
    emit_json,
    open_repo,
)
from failgate_hooks.core import exitcodes

if TYPE_CHECKING:
    from failgate_hooks.app.review import Candidate


@click.command()
@click.option("--all", "show_all", is_flag=True, help="List trusted verifiers too.")
@click.option("--yes", is_flag=True, help="Approve every listed verifier without asking.")
@click.option(
    "--json", "as_json", is_flag=True, help="List the verifiers as one JSON object; approve none."
)
@click.pass_context
def trust(ctx: click.Context, show_all: bool, yes: bool, as_json: bool) -> None:
    """Review the verifiers this machine does not trust yet, and approve them."""
    from failgate_hooks.app import review as verifiers
    from failgate_hooks.ledger.union import inspection_config
    from failgate_hooks.ledger.write import git_identity

    with open_repo(ctx) as repo:
        found = verifiers.candidates(repo, inspection_config(repo))
        listed = found if show_all else [c for c in found if not c.trusted]
        if as_json:
            emit_json({"schema_version": 1, "verifiers": [_candidate_json(c) for c in listed]})
            return
        for candidate in listed:
            for line in verifiers.describe(repo, candidate):
                echo(line)
        pending = verifiers.to_approve(found)
        if not pending:
            everything = "" if any(not c.trusted for c in found) else ": every verifier is trusted"
            echo(f"trust: nothing to approve{everything}")
            return
        if not yes and not sys.stdin.isatty():
            # click.confirm would read end-of-file and print a bare "Aborted!"
            echo(
                f"trust: nothing approved: no terminal to ask on. Review the {len(pending)} "
                "verifier(s) above, then approve them with `failgate trust --yes`"
            )
            ctx.exit(exitcodes.HELD)
        if not yes and not click.confirm(
            f"Trust these {len(pending)} verifier(s) on this machine?", default=False
        ):
            echo("trust: nothing approved")
            ctx.exit(exitcodes.HELD)
        verifiers.approve(repo, pending, git_identity(repo) or "unknown")
    echo(f"trust: approved {len(pending)} verifier(s)")


def _candidate_json(candidate: Candidate) -> dict[str, object]:
    """One verifier as `trust --json` lists it: what runs, from where, and its trust."""
    return {
        "entity_key": candidate.entity_key,
        "argv": list(candidate.argv),
        "settings": candidate.settings,
        "pinned": [{"path": path, "blob": oid} for path, oid in candidate.pinned],
        "pinned_from": candidate.pinned_from,
        "fingerprint": candidate.fingerprint,
        "trusted": candidate.trusted,
        "push_copy": candidate.push_copy,
        "downgrade": candidate.downgrade,
        "problem": candidate.problem,
    }


@click.command()
@click.pass_context
def demo(ctx: click.Context) -> None:
    """Show, with real pushes in a throwaway repository, a gate refusing then allowing."""
    from failgate_hooks.app.demo import run_demo

    ctx.exit(run_demo(echo))


# ---------------------------------------------------------------------------- hooks


@click.command()
@click.option("--chain", is_flag=True, help="Keep an existing pre-push hook and run it first.")
@click.pass_context
def install(ctx: click.Context, chain: bool) -> None:
    """Install failgate as this repository's plain git pre-push hook."""
    from failgate_hooks.app import install as installer

    with open_repo(ctx) as repo:
        path = installer.install(repo, chain=chain)
        fetched = installer.evidence_fetch(repo, add=True)
        in_work_tree = installer.in_work_tree_warning(repo, os.path.dirname(path))
    echo(f"failgate pre-push hook installed at {path}")
    if in_work_tree:
        echo(in_work_tree, err=True)
    if fetched:
        echo(fetched)


@click.command()
@click.pass_context
def uninstall(ctx: click.Context) -> None:
    """Remove failgate's pre-push hook (only its own; a chained one is restored)."""
    from failgate_hooks.app import install as installer

    with open_repo(ctx) as repo:
        echo(installer.uninstall(repo))
        fetched = installer.evidence_fetch(repo, add=False)
    if fetched:
        echo(fetched)


COMMANDS = [trust, demo, install, uninstall]
