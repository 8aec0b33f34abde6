"""Append-only, checked as a property of trees.

Two checks on every ref update: the old tip's event files are all present,
unchanged, in the new tip (force pushes, resets and rebases that drop events);
and every commit in the range holds each parent's event files unchanged (edits
in place, and merges whose resolution drops an event). The only way a file
may go is a `retracts` of an event of the same entity present in the new tip.
"""

from __future__ import annotations

from collections.abc import Sequence

from failgate_hooks.core.errors import UsageError
from failgate_hooks.core.events import Problem, is_ledger_file
from failgate_hooks.git.changes import COMMIT_MARK, Change, parse_log_raw
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger.union import Ledger, Revision, classify_path, read_union


def retracted_ids(ledger: Ledger) -> dict[str, frozenset[str]]:
    """Event ids that may be deleted, mapped to the entities whose valid events retract
    them (a file that fails validation retracts nothing). An id that two entities name
    stays each one's: which came last must not decide whose file may go."""
    out: dict[str, set[str]] = {}
    for file in ledger.files.values():
        if file.event is not None:
            for event_id in file.event.retracts:
                out.setdefault(event_id, set()).add(file.event.entity_key)
    return {event_id: frozenset(keys) for event_id, keys in out.items()}


class Retracted:
    """`retracted_ids` of the ledger at one commit, read only if a deletion asks.

    Most updates delete no event file: they never pay for reading the ledger."""

    def __init__(self, repo: GitRepo, commit: str, ledger_dir: str, max_event_bytes: int) -> None:
        self._repo, self._commit, self._ledger_dir = repo, commit, ledger_dir
        # The decision's own limit: a retraction it reads as too large retracts nothing here.
        self._max_event_bytes = max_event_bytes
        self._ids: dict[str, frozenset[str]] | None = None

    def get(self, event_id: str) -> frozenset[str]:
        """The entities whose events retract `event_id` (none: it may not be deleted)."""
        if self._ids is None:
            revision = Revision("new tip", self._commit)
            ledger = read_union(self._repo, [revision], self._ledger_dir, self._max_event_bytes)
            self._ids = retracted_ids(ledger)
        return self._ids.get(event_id, frozenset())


def _may_delete(path: str, ledger_dir: str, retracted: Retracted) -> bool:
    """Whether a file may go: an event of the entity whose folder holds it retracts its
    id, the file name's stem, whether the file validates or not."""
    key, _ = classify_path(path, ledger_dir)
    stem = path.rsplit("/", 1)[-1].removesuffix(".toml")
    return key is not None and key in retracted.get(stem)


def check_tips(
    repo: GitRepo, old: str, new: str, ledger_dir: str, retracted: Retracted
) -> list[Problem]:
    """Every event file of the old tip is in the new tip, byte for byte."""
    before = {e.path: e.oid for e in repo.ls_tree(old, ledger_dir) if is_ledger_file(e.path)}
    after = {e.path: e.oid for e in repo.ls_tree(new, ledger_dir)}
    problems = []
    for path, oid in sorted(before.items()):
        if after.get(path) == oid:
            continue
        stem = path.rsplit("/", 1)[-1].removesuffix(".toml")
        if path not in after:
            if _may_delete(path, ledger_dir, retracted):
                continue
            what = f"event {stem} of the old tip {old[:12]} is missing from the new tip"
        else:
            what = f"event {stem} differs from the old tip {old[:12]}"
        problems.append(
            Problem(
                code="append-only",
                message=f"{what}: events are never edited or dropped "
                "(a force push, reset or rebase lost it?); to remove one, record an event "
                "that retracts it",
                path=path,
                commit=new,
            )
        )
    return problems


def check_commits(
    repo: GitRepo, revisions: Sequence[str], ledger_dir: str, retracted: Retracted
) -> list[Problem]:
    """Every commit that `git log REVISIONS` lists keeps each parent's event files.

    One `git log -m` answers for the whole range, against every parent of a
    merge; `--full-history --sparse` keeps merges that path-limiting would
    otherwise simplify away (a merge that drops the side's event is exactly one).
    """
    # -z: a path git would quote (a `"`, a tab in the ledger's folder) comes as it is;
    # --literal-pathspecs: a `*`, `?` or `[` in the folder's name is part of the name.
    out = repo.run(
        "--literal-pathspecs", "log", "-z", "-m", "--raw", "--no-renames", "--no-abbrev",
        "--full-history", "--sparse", f"--format={COMMIT_MARK}%H", *revisions, "--", ledger_dir,
        strip=False,
    )  # fmt: skip
    problems: list[Problem] = []
    seen: set[tuple[str, str]] = set()
    for commit, changes in parse_log_raw(out):
        for change in changes:
            problem = _changed_event(commit or "", change, ledger_dir, retracted, seen)
            if problem is not None:
                problems.append(problem)
    return problems


def _changed_event(
    commit: str, change: Change, ledger_dir: str, retracted: Retracted, seen: set[tuple[str, str]]
) -> Problem | None:
    """The problem with one change a commit makes to the ledger folder, if any."""
    status, path = change.status, change.path
    if status == "A" or not is_ledger_file(path) or (commit, path) in seen:
        return None
    if status == "D" and _may_delete(path, ledger_dir, retracted):
        return None
    seen.add((commit, path))
    stem = path.rsplit("/", 1)[-1].removesuffix(".toml")
    verb = "deletes" if status == "D" else "changes"
    return Problem(
        code="append-only",
        message=f"commit {commit[:12]} {verb} event {stem}, which a parent holds: "
        "events are never edited or dropped; to remove one, record an event "
        "that retracts it",
        path=path,
        commit=commit,
    )


def check_update(
    repo: GitRepo,
    old: str | None,
    new: str,
    ledger_dir: str,
    max_event_bytes: int,
    *,
    exclude: Sequence[str] = (),
    skip_old: bool = True,
) -> list[Problem]:
    """Append-only for one ref moving from `old` (None: a new ref) to `new`.

    The commits checked are those reachable from `new` but not from the revision
    arguments in `exclude` (histories already checked, e.g. `--remotes=origin`), nor
    from `old` unless `skip_old` is false (where the old tip's history may never have
    been checked where a problem blocked: a server's ref pushed while only warned).
    """
    retracted = Retracted(repo, new, ledger_dir, max_event_bytes)
    problems = []
    if old is not None and _ledger_tree(repo, old, ledger_dir) != _ledger_tree(
        repo, new, ledger_dir
    ):  # one ledger tree holds the same files, byte for byte: nothing to compare
        problems += check_tips(repo, old, new, ledger_dir, retracted)
    not_revs = ([old] if old and skip_old else []) + list(exclude)
    by_commit = check_commits(repo, [new, "--not", *not_revs], ledger_dir, retracted)
    # A path a commit in the range broke is reported once, naming that commit.
    named = {p.path for p in by_commit}
    return [p for p in problems if p.path not in named] + by_commit


def _ledger_tree(repo: GitRepo, commit: str, ledger_dir: str) -> str | None:
    entry = repo.tree_entry(commit, ledger_dir.strip("/"))
    return None if entry is None else f"{entry.mode} {entry.oid}"


def check_range(repo: GitRepo, range_: str, ledger_dir: str, max_event_bytes: int) -> list[Problem]:
    """`--range A..B`: append-only from A's tip to B's, and over every commit between."""
    base, sep, tip = range_.partition("..")
    if not sep or not base or not tip or tip.startswith("."):
        raise UsageError(f"--range {range_!r}: expected A..B")
    if repo.is_shallow():
        from failgate_hooks.core.errors import GitError

        raise GitError(
            "this is a shallow clone: the append-only check needs the history of the range",
            hint="fetch full history (git fetch --unshallow, or fetch-depth: 0 in CI)",
        )
    old = repo.resolve_commit(base)
    new = repo.resolve_commit(tip)
    return check_update(repo, old, new, ledger_dir, max_event_bytes)
