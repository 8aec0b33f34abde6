"""`record`, `confirm` and `expire`: the commands that write one new event."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import click

from failgate_hooks.commands.output import echo
from failgate_hooks.commands.shell import (
    open_repo,
    parse_time,
    ref_option,
)
from failgate_hooks.core.errors import UsageError
from failgate_hooks.core.sanitize import clean_line


def _write(
    ctx: click.Context,
    build: Callable[[Any], Any],
    *,
    probe: bool = False,
    existing: str | None = None,
) -> None:
    """Shared tail of record/confirm/expire: write, warn, say what the probe found, print
    the path last. `existing` names a command that only changes an entity that exists."""
    from failgate_hooks.ledger.write import git_identity, write_event

    with open_repo(ctx) as repo:
        from failgate_hooks.ledger.union import inspection_config

        config = inspection_config(repo)
        draft = build(repo)
        if existing is not None:
            _require_entity(repo, config, draft.entity_key, existing)
        written = write_event(repo, config, draft, recorded_by=git_identity(repo))
        for warning in written.warnings:
            echo(f"warning: {clean_line(warning)}", err=True)
        for note in written.notes:
            echo(f"note: {clean_line(note)}", err=True)
        for line in _after_record(repo, config, written, probe=probe):
            echo(clean_line(line), err=True)
        root = repo.working_dir or "."
        echo(os.path.relpath(written.path, root))


def _require_entity(repo: Any, config: Any, key: str, command: str) -> None:
    """`confirm` and `expire` of a key no event names: a typo, said as one, with the
    nearest keys of the ledger (committed at HEAD, or in the work tree)."""
    import difflib

    from failgate_hooks.core.events import entity_key_of_folder
    from failgate_hooks.ledger.write import current_entity_files

    root, ledger_dir = repo.working_dir, config.ledger
    if root is None or not current_entity_files(repo, root, config, key).is_new:
        return  # a bare repository is refused by write_event, with its own message
    base = os.path.join(root, *ledger_dir.split("/"))
    folders = {os.path.relpath(d, base) for d, _, files in os.walk(base) if files}
    head = repo.try_resolve_commit("HEAD")
    if head is not None:
        folders |= {e.path.removeprefix(f"{ledger_dir}/").rpartition("/")[0]
                    for e in repo.ls_folder(head, ledger_dir)}  # fmt: skip
    keys = sorted({k for f in folders if (k := entity_key_of_folder(f.replace(os.sep, "/")))})
    near = difflib.get_close_matches(key, keys, n=3)
    hint = f"did you mean {' or '.join(near)}?" if near else "failgate gates lists the entities"
    raise UsageError(
        f"no entity {key!r} in the ledger: failgate {command} changes an entity that exists",
        hint=hint,
    )


def _after_record(repo: Any, config: Any, written: Any, *, probe: bool) -> list[str]:
    """What only warns (pinned files not committed), and what the probe found: each line
    as printed. `record` also trusts the verifier it writes: the person recording it
    wrote it."""
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
    warnings += [
        f"the command names {path}, which it does not pin: each commit under test gives its "
        f"own, and replay gives no verdict at one without it (if it is the verifier's, pin it "
        f"with --verify-file {path})"
        for path in (verifiers.unpinned_at(repo, verification, head) if head else ())
    ]
    untrusted = verifiers.trust_recorded(repo, event, event.recorded_by or "failgate record")
    warnings += [untrusted] if untrusted else []
    lines = [f"warning: {warning}" for warning in warnings]
    if probe and event.status is Status.OBSERVED:
        found = verifiers.probe(repo, config, event, trusted=untrusted is None)
        lines.append(f"{'probe' if found.expected else 'warning: probe'}: {found.text}")
    return lines


@click.command()
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
@ref_option(
    "refs",
    multiple=True,
    help="Applies to pushes to refs matching this glob, in full: refs/heads/release/*.",
)
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
@click.option(
    "--retracts",
    multiple=True,
    help="Id of an event whose file may be deleted, or the name (without .toml) of a "
    "misnamed file of the entity.",
)
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


@click.command()
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

    _write(ctx, build, existing="confirm")


@click.command()
@click.argument("key")
@click.option("--note", required=True, help="Why the risk no longer exists.")
@click.pass_context
def expire(ctx: click.Context, key: str, note: str) -> None:
    """Record that KEY's risk no longer exists (its gate retires)."""
    from failgate_hooks.core.events import Status
    from failgate_hooks.ledger.write import EventDraft

    _write(
        ctx,
        lambda repo: EventDraft(entity_key=key, status=Status.EXPIRED, note=note),
        existing="expire",
    )


COMMANDS = [record, confirm, expire]
