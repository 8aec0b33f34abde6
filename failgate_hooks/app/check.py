"""`failgate check`: one decision for a commit, trigger and destination."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from failgate_hooks.app.evaluate import Request
from failgate_hooks.core.events import is_ledger_file
from failgate_hooks.core.gates import Context, Decision
from failgate_hooks.git.repo import GitRepo

if TYPE_CHECKING:
    from failgate_hooks.app.attest import Attester


def run_check(
    repo: GitRepo,
    *,
    trigger: str,
    rev: str,
    ref: str | None,
    environment: str | None,
    ledger_revs: Sequence[str],
    range_: str | None,
    authority: str,
    no_cache: bool,
    trust_ledger: bool,
    sandbox: bool = False,
    attester: Attester | None = None,
) -> tuple[Decision, list[str]]:
    """The decision, and warnings for the person running it."""
    from failgate_hooks.app.report import decision_revisions
    from failgate_hooks.app.runner import decide_with_verifiers
    from failgate_hooks.ledger.appendonly import check_range

    # As the hook reads it, and gates: the remote's tip of the destination and its
    # default branch are protected unless --ledger-rev names others, and the first
    # protected revision's configuration is in force, not the checked commit's own.
    revisions, extra_protected, config = decision_revisions(
        repo, rev, ref, ledger_revs, signs=attester is not None
    )
    commit = revisions[0].commit
    # The ledger is read from commits: the warnings say when the work tree holds more.
    # git works on it on the other core while the decision is made.
    uncommitted = start_uncommitted_warnings(repo, config.ledger)
    history = check_range(repo, range_, config.ledger, config.max_event_bytes) if range_ else []
    request = Request(
        commit=commit,
        context=Context(trigger=trigger, ref=ref, environment=environment),
        revisions=tuple(revisions),
        authority=authority,
        no_cache=no_cache,
        trust_ledger=trust_ledger,
        extra_protected_refs=extra_protected,
        history_errors=tuple(history),
    )
    sandbox_by = "failgate check --sandbox" if sandbox else None
    decision = decide_with_verifiers(
        repo, config, request, sandbox_by=sandbox_by, attester=attester
    )
    return decision, uncommitted()


def start_uncommitted_warnings(repo: GitRepo, ledger_dir: str) -> Callable[[], list[str]]:
    """Start asking git which ledger paths the work tree holds but HEAD does not, or differ.

    Call the result for the warnings that say so: `check` and both hooks read the
    ledger from commits only. No work tree (a server's bare repository), or no
    ledger folder in it: no process, and nothing to warn about."""
    root, folder = repo.working_dir, ledger_dir.strip("/")
    if root is None or not os.path.isdir(os.path.join(root, *folder.split("/"))):
        return list
    status = repo.start(  # a `*` in the folder's name is part of the name
        "--literal-pathspecs", "status", "--porcelain", "-z", "--untracked-files=all", "--", folder
    )
    return lambda: _warnings(_status_paths(status()), lambda: _committed(repo, ledger_dir))


def _status_paths(output: str) -> list[str]:
    """The paths of `git status --porcelain -z`: a rename or copy names its source too."""
    paths = []
    records = iter(output.split("\0"))
    for record in records:
        if not record:
            continue
        paths.append(record[3:])
        if record[0] in "RC":
            paths.append(next(records, ""))
    return [path for path in paths if path]


def _committed(repo: GitRepo, ledger_dir: str) -> set[str]:
    """The ledger files HEAD holds: the commit the work tree's changes are made on."""
    head = repo.try_resolve_commit("HEAD")
    return set() if head is None else {e.path for e in repo.ls_folder(head, ledger_dir)}


def _warnings(paths: list[str], committed: Callable[[], set[str]]) -> list[str]:
    # a file taken out of the index is reported twice (deleted, and untracked)
    changed = [p for p in dict.fromkeys(paths) if is_ledger_file(p)]
    if not changed:
        return []
    held = committed()  # asked only when something differs: a listing of the ledger
    new = [path for path in changed if path not in held]
    edited = [path for path in changed if path in held]
    warnings = []
    if new:
        warnings.append(
            f"{len(new)} ledger file(s) in the work tree are not committed, so they were not "
            f"read and not applied (e.g. {new[0]}): commit them for them to count"
        )
    if edited:
        # committing an edit is an append-only violation: the advice is not "commit"
        warnings.append(
            f"{len(edited)} committed ledger file(s) are changed or deleted in the work tree "
            f"(e.g. {edited[0]}) and were read as committed: events are append-only, so "
            "record a new event instead (failgate record) and restore the file (git restore)"
        )
    return warnings
