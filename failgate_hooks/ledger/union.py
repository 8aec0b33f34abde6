"""The ledger as git holds it: the union of several revisions, with provenance.

Read from git objects, never from the working tree: the working
tree is not what is pushed. Each event remembers which revisions hold it, since
authority and pinning depend on it. The working tree's ledger is worktree.py's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from failgate_hooks.core.errors import GitError, UsageError
from failgate_hooks.core.events import (
    ID_RE,
    RETRACTABLE_STEM_RE,
    Event,
    Problem,
    entity_key_of_folder,
    is_ledger_file,
)
from failgate_hooks.core.resolve import Resolution, resolve_entity
from failgate_hooks.core.validate import parse_event
from failgate_hooks.git.catfile import BoundedBlob
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.git.trees import TreeEntry
from failgate_hooks.ledger.config import (
    CONFIG_FILES,
    MAX_CONFIG_BYTES,
    Config,
    parse_config,
    strictest,
)
from failgate_hooks.ledger.parsecache import File, Parse, ParseCache


class Revision(NamedTuple):
    """A revision the ledger is read from: `label` is for people, `commit` is the id."""

    label: str
    commit: str
    protected: bool = False


# Mutable, unlike the other values: the union marks a file invalid when it meets a
# second file of the same id. Plain classes: importing dataclasses costs every run.
class LedgerFile:
    """One file under the ledger folder, as one or more revisions hold it."""

    __slots__ = ("entity_key", "event", "oid", "path", "problems", "revisions")

    def __init__(
        self,
        path: str,  # repository-relative
        oid: str,
        entity_key: str | None,  # from the folder; None when the folder names no entity
        event: Event | None,  # None when it failed validation
        problems: tuple[Problem, ...],
        revisions: tuple[Revision, ...] = (),
    ) -> None:
        self.path = path
        self.oid = oid
        self.entity_key = entity_key
        self.event = event
        self.problems = problems
        self.revisions = revisions

    def _fields(self) -> tuple[object, ...]:
        return (self.path, self.oid, self.entity_key, self.event, self.problems, self.revisions)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LedgerFile) and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"LedgerFile{self._fields()!r}"

    @property
    def event_id(self) -> str:
        return self.path.rsplit("/", 1)[-1].removesuffix(".toml")

    @property
    def protected(self) -> bool:
        return any(r.protected for r in self.revisions)


class Ledger:
    """The union by id of the ledger at several revisions."""

    def __init__(self, ledger_dir: str, revisions: list[Revision]) -> None:
        self.ledger_dir = ledger_dir
        self.revisions = revisions
        self.files: dict[str, LedgerFile] = {}  # by repository path
        self.problems: list[Problem] = []  # problems no entity owns
        self.paths_by_id: dict[str, str] = {}
        # Each entity's resolution as the parse cache keeps it, for entities whose
        # files are exactly their parses: the union changed none of them (no duplicate
        # id, no misnamed file). Resolving those files again gives the same answer.
        self.resolved: dict[str, Resolution] = {}

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

    def resolve(self, entity_key: str, also_dropped: Iterable[str] = ()) -> Resolution:
        return self._resolve(entity_key, None, frozenset(also_dropped))

    def resolve_all(self) -> dict[str, Resolution]:
        # grouped once: resolving entity by entity over the whole ledger was quadratic
        return {
            key: self._resolve(key, files, frozenset())
            for key, files in self.files_by_entity().items()
        }

    def _resolve(
        self, entity_key: str, files: Sequence[LedgerFile] | None, also_dropped: frozenset[str]
    ) -> Resolution:
        cached = self.resolved.get(entity_key)
        if cached is not None and not also_dropped:
            return cached
        files = self.files_of(entity_key) if files is None else files
        # by path, as the cache resolves them: problems list in one order, whatever
        # order the revisions were read in
        files = sorted(files, key=lambda f: f.path)
        events = [f.event for f in files if f.event is not None]
        problems = [p for f in files for p in f.problems]
        return resolve_entity(entity_key, events, problems, also_dropped=also_dropped)


# ---------------------------------------------------------------------------- reading

REGULAR_MODES = ("100644", "100755")  # the modes of an event file


def classify_path(path: str, ledger_dir: str) -> tuple[str | None, Problem | None]:
    """The entity a ledger file belongs to, and what is wrong with its name if anything."""
    folder, _, name = path[len(ledger_dir) + 1 :].rpartition("/")
    key = entity_key_of_folder(folder) if folder else None
    if key is None:
        where = "the ledger root" if not folder else f"folder {folder!r}"
        return None, Problem(
            code="outside-entity",
            message=f"event file in {where}, which names no entity "
            "(folders must be entity key segments of [a-z0-9][a-z0-9_-]*)",
            path=path,
        )
    stem = name.removesuffix(".toml")
    if not name.endswith(".toml") or not ID_RE.match(stem):
        message = "not an event file name (<YYYYMMDDTHHMMSSZ>-<8 hex>.toml)"
        if not RETRACTABLE_STEM_RE.match(stem):
            message += (
                ", nor one a retraction can name (1 to 100 of A-Z a-z 0-9 . _ -): it holds "
                "the entity invalid until history is rewritten to rename or remove it"
            )
        return key, Problem(code="bad-file-name", message=message, path=path, entity_key=key)
    return key, None


# A ledger of more files than this is refused whole: no team records a hundred
# thousand failures, and reading them would make every push wait.
MAX_LEDGER_FILES = 100_000


def read_union(
    repo: GitRepo,
    revisions: Sequence[Revision],
    ledger_dir: str,
    max_event_bytes: int,
) -> Ledger:
    """The ledger at every revision, merged by id; a differing duplicate is an integrity error.

    An event file over `max_event_bytes` is invalid, and a ledger of more than
    MAX_LEDGER_FILES files is an integrity problem, before anything is parsed."""
    folder = ledger_dir.strip("/")
    # Revisions whose ledger folder is the same tree (the usual push: code changed,
    # the ledger not) are read as one listing that all of them hold.
    by_folder: dict[TreeEntry | None, list[Revision]] = {}
    for rev in revisions:
        by_folder.setdefault(repo.tree_entry(rev.commit, folder), []).append(rev)
    listings = [
        (tuple(revs), repo.ls_folder(revs[0].commit, folder)) for revs in by_folder.values()
    ]
    too_many = max(len(entries) for _, entries in listings) if listings else 0
    if too_many > MAX_LEDGER_FILES:
        ledger = Ledger(ledger_dir=ledger_dir, revisions=list(revisions))
        ledger.problems.append(
            Problem(
                code="ledger-too-large",
                message=f"the ledger holds {too_many} files, more than {MAX_LEDGER_FILES}: "
                "nothing of it was read",
                path=folder,
            )
        )
        return ledger
    # each path named once, however many revisions list it
    names: dict[str, Name] = {}
    for _, entries in listings:
        for entry in entries:
            if entry.path not in names and is_ledger_file(entry.path):
                names[entry.path] = Name(*classify_path(entry.path, ledger_dir))
    parsed, resolved = _parse_event_files(repo, _event_files(listings, names), max_event_bytes)
    ledger = Ledger(ledger_dir=ledger_dir, revisions=list(revisions))
    altered: set[str] = set()  # entities whose files are not just their parses
    for revs, entries in listings:
        for entry in entries:
            name = names.get(entry.path)
            if name is not None:  # dot-files are left out: never events
                _add_entry(ledger, entry, name, revs, parsed, altered)
    ledger.resolved = {key: r for key, r in resolved.items() if key not in altered}
    return ledger


class Name(NamedTuple):
    """What a ledger file's path says: its entity, and what is wrong with the name if anything."""

    entity_key: str | None
    problem: Problem | None


Parsed = dict[File, Parse]  # by (path, blob id)


def _event_files(
    listings: Sequence[tuple[tuple[Revision, ...], Sequence[TreeEntry]]], names: Mapping[str, Name]
) -> dict[str, list[File]]:
    """Each entity's event files (regular, well named) the listings hold, once each, sorted."""
    found: dict[str, dict[File, None]] = {}
    for _, entries in listings:
        for entry in entries:
            name = names.get(entry.path)
            if name is None or name.problem is not None or entry.mode not in REGULAR_MODES:
                continue
            assert name.entity_key is not None
            found.setdefault(name.entity_key, {})[entry.path, entry.oid] = None
    return {key: sorted(files) for key, files in found.items()}


def _parse_event_files(
    repo: GitRepo, files_by_entity: Mapping[str, list[File]], max_event_bytes: int
) -> tuple[Parsed, dict[str, Resolution]]:
    """Every event file parsed, and with a cache each entity's parses resolved: the
    cache's, else read from git, parsed and resolved (and kept).

    A blob git cannot give is left out, and nothing of its entity is kept: `_add_entry`
    names the file it belongs to."""
    if not files_by_entity:
        return {}, {}  # no ledger, no cache file to open
    cache = ParseCache.open(repo)
    parsed: Parsed = {}
    resolved: dict[str, Resolution] = {}
    missed: dict[str, list[File]] = {}

    # The limit decides what a file parses to: a parse kept under one limit is no answer
    # under another.
    def cache_key(key: str) -> str:
        return f"{key} max_event_bytes={max_event_bytes}"

    for key, files in files_by_entity.items():
        entry = cache.get(cache_key(key), files)
        if entry is None:
            missed[key] = files
        else:
            parsed.update(zip(files, entry[0], strict=True))
            resolved[key] = entry[1]
    parsed.update(_read_and_parse(repo, missed, max_event_bytes))
    if not cache.enabled:
        return parsed, resolved  # nothing to keep: the ledger resolves what it needs
    for key, files in missed.items():
        if all(file in parsed for file in files):
            parses = [parsed[file] for file in files]
            resolved[key] = _resolve_parses(key, parses)
            cache.put(cache_key(key), files, (parses, resolved[key]))
    cache.save()
    return parsed, resolved


def _resolve_parses(entity_key: str, parses: Sequence[Parse]) -> Resolution:
    """What `Ledger.resolve` gives for an entity whose files are exactly these parses."""
    events = [event for event, _ in parses if event is not None]
    problems = [p for _, found in parses for p in _with_entity(found, entity_key)]
    return resolve_entity(entity_key, events, problems)


def _with_entity(problems: Sequence[Problem], entity_key: str) -> tuple[Problem, ...]:
    """A parse's problems as its entity's files carry them."""
    return tuple(p._replace(entity_key=entity_key) for p in problems)


def _read_and_parse(
    repo: GitRepo, files_by_entity: Mapping[str, list[File]], max_event_bytes: int
) -> Parsed:
    """The files' blobs read in one batch through `cat-file`, each parsed as it comes."""
    keys_by_oid: dict[str, dict[str, str]] = {}  # blob id -> path -> entity key
    for key, files in files_by_entity.items():
        for path, oid in files:
            keys_by_oid.setdefault(oid, {})[path] = key
    # Bounded as git reads them: a pushed event of gigabytes is never held in memory.
    return {
        (path, blob.oid): _parse_bounded(blob, path, key, max_event_bytes)
        for blob in repo.iter_bounded_blobs(keys_by_oid, max_event_bytes, missing_ok=True)
        for path, key in keys_by_oid[blob.oid].items()
    }


def _parse_bounded(blob: BoundedBlob, path: str, key: str, max_event_bytes: int) -> Parse:
    if blob.data is None:
        problem = Problem(
            code="event-too-large",
            message=f"{blob.size} bytes, more than max_event_bytes ({max_event_bytes}): "
            "an event is a few hundred bytes; retract this one",
            path=path,
            entity_key=key,
        )
        return None, (problem,)
    return parse_event(blob.data, path, entity_key=key)


def _add_entry(
    ledger: Ledger,
    entry: TreeEntry,
    name: Name,
    revs: tuple[Revision, ...],
    parsed: Parsed,
    altered: set[str],
) -> None:
    """Add one listed file; name in `altered` each entity whose files it makes more than
    their parses."""
    path, oid = entry.path, entry.oid
    key = name.entity_key
    if name.problem is not None:
        problem = name.problem._replace(commit=revs[0].commit)
        if key is None:
            ledger.problems.append(problem)
        else:
            altered.add(key)
            if path not in ledger.files:
                ledger.files[path] = LedgerFile(path, oid, key, None, (problem,), revs)
        return
    assert key is not None
    stem = path.rsplit("/", 1)[-1].removesuffix(".toml")
    known_path = ledger.paths_by_id.get(stem)
    if known_path is not None:
        existing = ledger.files[known_path]
        if existing.oid == oid and known_path == path:
            existing.revisions += revs
            return
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
        existing.problems = (problem._replace(path=known_path, entity_key=existing.entity_key),)
        if path != known_path:
            fresh = LedgerFile(path, oid, key, None, (), revs)
            other = ledger.files.setdefault(path, fresh)
            other.event = None
            other.problems = (problem._replace(entity_key=key),)
        altered.update(k for k in (key, existing.entity_key) if k)
        return
    ledger.paths_by_id[stem] = path
    if entry.mode not in REGULAR_MODES:
        problem = Problem(
            code="not-a-file",
            message=f"ledger entries must be regular files (mode {entry.mode})",
            path=path,
            commit=revs[0].commit,
            entity_key=key,
        )
        ledger.files[path] = LedgerFile(path, oid, key, None, (problem,), revs)
        altered.add(key)
        return
    if (path, oid) not in parsed:
        # name the file, not only the object: the path is what a person can look up
        raise GitError(
            f"{path}: blob {oid} is missing from the object database",
            hint="the object database is damaged: run git fsck, or fetch the object again",
        )
    event, problems = parsed[path, oid]
    ledger.files[path] = LedgerFile(path, oid, key, event, _with_entity(problems, key), revs)


def config_at(repo: GitRepo, commit: str, label: str) -> Config:
    """The configuration as committed at `commit` (defaults when it has none)."""
    # the root tree through the running cat-file: no ls-tree process for two names
    where = f"{label} {commit[:12]}"
    files = {}
    for entry in repo.tree_entries(repo.commit_tree(commit)):
        if entry.path in CONFIG_FILES and entry.type == "blob":
            data = repo.read_blob_at_most(entry.oid, MAX_CONFIG_BYTES)
            if data is None:
                raise UsageError(
                    f"{where}: {entry.path} is larger than {MAX_CONFIG_BYTES} bytes, more "
                    "than failgate reads of a configuration file"
                )
            files[entry.path] = data
    return parse_config(files, where)


def config_for(repo: GitRepo, revisions: Sequence[Revision]) -> Config:
    """The configuration in force for a read of `revisions`: the first protected
    revision's; C's own (the first revision's) only when none is protected."""
    return config_at(repo, *config_revision(revisions))


# What a read of no protected revision holds the commit's own configuration to.
BUILT_IN = Config(source="the built-in defaults")


def config_in_force(
    repo: GitRepo,
    revisions: Sequence[Revision],
    default: Config | None = None,
    *,
    floor: Config | None = BUILT_IN,
) -> Config:
    """The configuration a push or a build is decided with: the first protected
    revision's (`config_for`), no laxer than `default` (the default branch's, when one
    is read); with none protected, C's own (the first revision's), no laxer than
    `floor`, the built-in defaults.

    The one rule of the client hook, the server hook, `failgate ci` and `check`: a
    commit's own configuration may only tighten what is reviewed, and where nothing is
    (a single-branch clone's new branch, a push build whose base is gone), what is
    built in; a release branch whose tip an admin once set to warn stays held to what
    the default branch enforces. `check` alone passes floor=None (app/report.py says
    why)."""
    config = config_for(repo, revisions)
    if not any(r.protected for r in revisions):
        return config if floor is None else strictest(config, floor)
    return config if default is None else strictest(config, default)


def config_revision(revisions: Sequence[Revision]) -> tuple[str, str]:
    """(commit, label) of the revision `config_for` reads."""
    for rev in revisions:
        if rev.protected:
            return rev.commit, rev.label
    return revisions[0].commit, revisions[0].label


def inspection_config(repo: GitRepo) -> Config:
    """Config for commands that only write or inspect: the remote default
    branch's committed config when there is one, else HEAD's, else defaults."""
    from failgate_hooks.git.remotes import inspected_branch

    branch = inspected_branch(repo)
    if branch is not None:
        return config_at(repo, branch.commit, branch.tracking_ref)
    head = repo.try_resolve_commit("HEAD")
    return config_at(repo, head, "HEAD") if head else Config()
