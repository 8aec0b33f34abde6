"""The ledger as git holds it: the union of several revisions, with provenance.

Read from git objects, never from the working tree (DESIGN §5): the working
tree is not what is pushed. Each event remembers which revisions hold it, since
authority and pinning depend on it. Writing a new event file is here too,
because it is the one place failgate touches the working tree's ledger.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from failgate_hooks.core.errors import GitError, LedgerError
from failgate_hooks.core.events import (
    ID_RE,
    Event,
    Problem,
    entity_folder,
    entity_key_of_folder,
    event_to_toml,
)
from failgate_hooks.core.resolve import Resolution, resolve_entity
from failgate_hooks.core.validate import parse_event
from failgate_hooks.git.repo import GitRepo, TreeEntry
from failgate_hooks.ledger.config import CONFIG_FILES, Config, parse_config


@dataclass(frozen=True)
class Revision:
    """A revision the ledger is read from: `label` is for people, `commit` is the id."""

    label: str
    commit: str
    protected: bool = False


@dataclass
class LedgerFile:
    """One file under the ledger folder, as one or more revisions hold it."""

    path: str  # repository-relative
    oid: str
    entity_key: str | None  # from the folder; None when the folder names no entity
    event: Event | None  # None when it failed validation
    problems: list[Problem]
    revisions: list[Revision] = field(default_factory=list)

    @property
    def event_id(self) -> str:
        return self.path.rsplit("/", 1)[-1].removesuffix(".toml")

    @property
    def protected(self) -> bool:
        return any(r.protected for r in self.revisions)


@dataclass
class Ledger:
    """The union by id of the ledger at several revisions."""

    ledger_dir: str
    revisions: list[Revision]
    files: dict[str, LedgerFile] = field(default_factory=dict)  # by repository path
    problems: list[Problem] = field(default_factory=list)  # problems no entity owns
    paths_by_id: dict[str, str] = field(default_factory=dict)

    def file_of_id(self, event_id: str) -> LedgerFile | None:
        path = self.paths_by_id.get(event_id)
        return None if path is None else self.files[path]

    @property
    def entity_keys(self) -> list[str]:
        return sorted({f.entity_key for f in self.files.values() if f.entity_key})

    def files_of(self, entity_key: str) -> list[LedgerFile]:
        return [f for f in self.files.values() if f.entity_key == entity_key]

    def files_by_entity(self) -> dict[str, list[LedgerFile]]:
        """Every entity's files, in one pass over the ledger (not one pass per entity)."""
        grouped: dict[str, list[LedgerFile]] = {}
        for file in self.files.values():
            if file.entity_key:
                grouped.setdefault(file.entity_key, []).append(file)
        return dict(sorted(grouped.items()))

    @property
    def protected_ids(self) -> frozenset[str]:
        """Ids of events that some protected revision already holds."""
        return frozenset(f.event_id for f in self.files.values() if f.protected)

    def resolve(
        self,
        entity_key: str,
        also_dropped: Iterable[str] = (),
        *,
        files: Sequence[LedgerFile] | None = None,
    ) -> Resolution:
        files = self.files_of(entity_key) if files is None else files
        events = [f.event for f in files if f.event is not None]
        problems = [p for f in files for p in f.problems]
        return resolve_entity(entity_key, events, problems, also_dropped=frozenset(also_dropped))

    def resolve_all(self) -> dict[str, Resolution]:
        # grouped once: resolving entity by entity over the whole ledger was quadratic
        return {
            key: self.resolve(key, files=files) for key, files in self.files_by_entity().items()
        }


# ---------------------------------------------------------------------------- reading


# folder -> the entity it names: a ledger has thousands of files in far fewer folders
_folder_keys: dict[str, str | None] = {}


def entity_of(path: str, ledger_dir: str) -> str | None:
    """The entity whose folder holds the ledger file `path` (None: no entity's)."""
    folder = path[len(ledger_dir) + 1 :].rpartition("/")[0]
    if folder not in _folder_keys:
        _folder_keys[folder] = entity_key_of_folder(folder) if folder else None
    return _folder_keys[folder]


@functools.cache  # pure, and asked for every file at every revision read
def classify_path(path: str, ledger_dir: str) -> tuple[str | None, Problem | None]:
    """The entity a ledger file belongs to, and what is wrong with its name if anything."""
    folder, _, name = path[len(ledger_dir) + 1 :].rpartition("/")
    key = entity_of(path, ledger_dir)
    if key is None:
        where = "the ledger root" if not folder else f"folder {folder!r}"
        return None, Problem(
            code="outside-entity",
            message=f"event file in {where}, which names no entity "
            "(folders must be entity key segments of [a-z0-9][a-z0-9_-]*)",
            path=path,
        )
    if not name.endswith(".toml") or not ID_RE.match(name.removesuffix(".toml")):
        return key, Problem(
            code="bad-file-name",
            message="not an event file name (<YYYYMMDDTHHMMSSZ>-<8 hex>.toml)",
            path=path,
            entity_key=key,
        )
    return key, None


FEW = 32  # event files parsed directly, without the parse cache

# (blob id, path, entity key) -> its parse: a blob id names its bytes forever, so a
# parse is reused for the same path and folder, in this process and (parsecache) across.
_parsed: dict[tuple[str, str, str | None], tuple[Event | None, list[Problem]]] = {}


def parse_blob(repo: GitRepo, oid: str, path: str, key: str) -> tuple[Event | None, list[Problem]]:
    cached = _parsed.get((oid, path, key))
    if cached is None:
        try:
            raw = repo.read_blob(oid)
        except GitError as exc:
            # name the file, not only the object: the path is what a person can look up
            raise GitError(
                f"{path}: {exc.message}",
                hint="the object database is damaged: run git fsck, or fetch the object again",
            ) from None
        cached = parse_event(raw, path, entity_key=key)
        _parsed[(oid, path, key)] = cached
    return cached


def _parse_new(repo: GitRepo, entries: Sequence[TreeEntry], ledger_dir: str) -> None:
    """Parse the event files among `entries` that this process has not parsed yet.

    The parse cache answers for the blobs it has seen; the rest are read in one
    batch, parsed, and cached for the next run."""
    wanted: dict[tuple[str, str, str | None], None] = {}
    for entry in {(e.path, e.oid): e for e in entries}.values():
        if entry.mode not in REGULAR or entry.path.rsplit("/", 1)[-1][:1] == ".":
            continue
        key, problem = classify_path(entry.path, ledger_dir)
        if problem is None and (entry.oid, entry.path, key) not in _parsed:
            wanted[(entry.oid, entry.path, key)] = None
    if not wanted:
        return
    cache = None
    if len(wanted) > FEW:  # a few files parse faster than the cache's decoders are built
        from failgate_hooks.parsecache import ParseCache

        try:
            cache = ParseCache(repo.common_dir)
        except GitError:
            cache = ParseCache(None)
        _parsed.update(cache.lookup(wanted))
    missing: dict[str, list[tuple[str, str, str | None]]] = {}
    for k in wanted:
        if k not in _parsed:
            missing.setdefault(k[0], []).append(k)
    if missing:
        # each parsed as git gives it, while git reads the next ones; a blob git
        # cannot give is left to _add_entry, which says which file it is
        fresh = {
            k: parse_event(raw, k[1], entity_key=k[2])
            for oid, raw in repo.iter_blobs(missing, missing_ok=True)
            for k in missing[oid]
        }
        _parsed.update(fresh)
        if cache is not None:
            cache.store(fresh)


def read_union(repo: GitRepo, revisions: Sequence[Revision], ledger_dir: str) -> Ledger:
    """The ledger at every revision, merged by id; a differing duplicate is an integrity error."""
    seen_commits: dict[str, list[Revision]] = {}
    for rev in revisions:
        seen_commits.setdefault(rev.commit, []).append(rev)
    # at most one ls-tree per distinct ledger tree; then every new blob in one batch
    folder = ledger_dir.strip("/")
    listed = [(revs, repo.ls_folder(commit, folder)) for commit, revs in seen_commits.items()]
    return union_of(repo, revisions, ledger_dir, listed)


def union_of(
    repo: GitRepo,
    revisions: Sequence[Revision],
    ledger_dir: str,
    listed: Sequence[tuple[list[Revision], Sequence[TreeEntry]]],
) -> Ledger:
    """The union of listings of the ledger folder, each with the revisions that hold it.

    `read_union` gives it whole listings; `ledgerindex` only the files of the
    entities it must read in full, in the same order, so each such entity comes
    out exactly as the whole union would have it."""
    ledger = Ledger(ledger_dir=ledger_dir, revisions=list(revisions))
    every = [entry for _, entries in listed for entry in entries]
    _parse_new(repo, every, ledger_dir)
    for revs, entries in listed:
        for entry in entries:
            _add_entry(repo, ledger, entry.path, entry.oid, entry.mode, revs)
    return ledger


def _add_entry(
    repo: GitRepo, ledger: Ledger, path: str, oid: str, mode: str, revs: list[Revision]
) -> None:
    name = path.rsplit("/", 1)[-1]
    if name.startswith("."):
        return  # dot-files are temporary files of an interrupted write, never events
    key, name_problem = classify_path(path, ledger.ledger_dir)
    if name_problem is not None:
        problem = at_commit(name_problem, revs[0].commit)
        if key is None:
            ledger.problems.append(problem)
        elif path not in ledger.files:
            ledger.files[path] = LedgerFile(path, oid, key, None, [problem], list(revs))
        return
    assert key is not None
    stem = name.removesuffix(".toml")
    known_path = ledger.paths_by_id.get(stem)
    if known_path is not None:
        existing = ledger.files[known_path]
        if existing.oid != oid or known_path != path:
            first = existing.revisions[0]
            problem = Problem(
                code="duplicate-id",
                message=f"event {stem} differs between {first.label} "
                f"({first.commit[:12]}: {known_path}) and {revs[0].label} "
                f"({revs[0].commit[:12]}: {path}); an event is never edited",
                path=path,
                commit=revs[0].commit,
            )
            ledger.problems.append(problem)
            # Which copy came first must not decide the entity: neither copy counts,
            # and each entity holding one is invalid, whatever order they came in.
            existing.event = None
            existing.problems = [replace(problem, path=known_path, entity_key=existing.entity_key)]
            if path != known_path:
                fresh = LedgerFile(path, oid, key, None, [], list(revs))
                other = ledger.files.setdefault(path, fresh)
                other.event = None
                other.problems = [replace(problem, entity_key=key)]
        else:
            existing.revisions.extend(revs)
        return
    ledger.paths_by_id[stem] = path
    if mode not in REGULAR:
        problem = not_a_file(path, mode, revs[0].commit, key)
        ledger.files[path] = LedgerFile(path, oid, key, None, [problem], list(revs))
        return
    event, problems = owned(parse_blob(repo, oid, path, key), key)
    ledger.files[path] = LedgerFile(path, oid, key, event, problems, list(revs))


# What one file of an entity says, shared with ledgerindex's read of a clean tree.
REGULAR = ("100644", "100755")  # the modes of an event file


def at_commit(name_problem: Problem, commit: str) -> Problem:
    """A file name's problem (classify_path), placed at the commit that holds it."""
    return Problem(**{**name_problem.__dict__, "commit": commit})


def not_a_file(path: str, mode: str, commit: str, key: str) -> Problem:
    return Problem(
        code="not-a-file",
        message=f"ledger entries must be regular files (mode {mode})",
        path=path,
        commit=commit,
        entity_key=key,
    )


def owned(
    parsed: tuple[Event | None, list[Problem]], key: str
) -> tuple[Event | None, list[Problem]]:
    """A parse, its problems made the entity's own (the parse's list may be shared)."""
    event, problems = parsed
    return event, [Problem(**{**p.__dict__, "entity_key": key}) for p in problems]


def config_at(repo: GitRepo, commit: str, label: str) -> Config:
    """The configuration as committed at `commit` (defaults when it has none)."""
    # the root tree through the running cat-file: no ls-tree process for two names
    files = {
        e.path: repo.read_blob(e.oid)
        for e in repo.tree_entries(repo.commit_tree(commit))
        if e.path in CONFIG_FILES and e.type == "blob"
    }
    return parse_config(files, f"{label} {commit[:12]}")


# ---------------------------------------------------------------------------- writing


def write_event_file(root: str, ledger_dir: str, event: Event) -> str:
    """Write a new event file atomically and never over an existing one; return its path.

    The bytes go to a dot-file first (readers skip dot-files), then `os.link`
    gives them their final name, which fails if that name exists.
    """
    folder = os.path.join(root, ledger_dir, *entity_folder(event.entity_key).split("/"))
    os.makedirs(folder, exist_ok=True)
    final = os.path.join(folder, f"{event.id}.toml")
    temp = os.path.join(folder, f".{event.id}.{os.getpid()}.tmp")
    data = event_to_toml(event)
    try:
        with open(temp, "xb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temp, final)
        except FileExistsError:
            raise LedgerError(
                f"{final} already exists; an event file is never overwritten"
            ) from None
    finally:
        if os.path.exists(temp):
            os.unlink(temp)
    return final


def working_tree_files(root: str, ledger_dir: str, entity_key: str) -> Mapping[str, bytes]:
    """The entity's event files in the working tree (not child entities), by repo path."""
    rel_folder = f"{ledger_dir}/{entity_folder(entity_key)}"
    folder = os.path.join(root, *rel_folder.split("/"))
    out: dict[str, bytes] = {}
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return out
    for name in names:
        full = os.path.join(folder, name)
        if name.startswith(".") or not name.endswith(".toml") or not os.path.isfile(full):
            continue
        with open(full, "rb") as handle:
            out[f"{rel_folder}/{name}"] = handle.read()
    return out


def inspection_config(repo: GitRepo) -> Config:
    """Config for commands that only write or inspect (§5): the remote default
    branch's committed config when there is one, else HEAD's, else defaults."""
    from failgate_hooks.git.repo import default_remote, remote_default_branch

    remote = default_remote(repo)
    found = remote_default_branch(repo, remote) if remote else None
    if found is not None:
        return config_at(repo, found[1], found[0])
    head = repo.try_resolve_commit("HEAD")
    return config_at(repo, head, "HEAD") if head else Config()
