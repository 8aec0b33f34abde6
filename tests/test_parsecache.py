"""The parse cache: decisions are the same with it, without it and from it, and a cache
file that is bad, of another version or unwritable is never believed nor fatal."""

from __future__ import annotations

import datetime as dt
import itertools
import pickle
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from failgate_hooks.app.evaluate import Evaluator, Request
from failgate_hooks.core.events import AppliesTo, Event, Status, event_to_toml
from failgate_hooks.core.gates import Context, Decision
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger import parsecache, union
from failgate_hooks.ledger.config import MAX_EVENT_BYTES, Config
from failgate_hooks.ledger.union import Ledger, Revision, read_union
from tests.conftest import Repo, git, make_repo

WHEN = dt.datetime(2026, 11, 30, 3, 0, tzinfo=dt.UTC)
KEYS = ["ops:a", "ops:b", "ops:b:c", "svc:d"]
TRIGGERS = [None, ("push",), ("deploy",), ("push", "deploy")]
SCOPES = [
    None,
    AppliesTo(paths=("README",)),
    AppliesTo(refs=("refs/heads/release/*",)),
    AppliesTo(environments=("prod",)),
]
CONTEXTS = [
    Context("push", "refs/heads/main"),
    Context("push", "refs/heads/release/1"),
    Context("deploy", None, "prod"),
]


def gid(n: int) -> str:
    return f"20261130T0300{n:02d}Z-{n:08x}"


def path_of(event: Event) -> str:
    return f"ledger/{event.entity_key.replace(':', '/')}/{event.id}.toml"


class World:
    """One repository; each commit holds exactly the files it is given (one fast-import)."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.counter = itertools.count()

    def commit(self, files: dict[str, bytes]) -> str:
        n = next(self.counter)
        ref = f"refs/cache/{n}"
        message = f"{n}\n"  # the same files make another commit, with the same tree
        stream = bytearray(
            f"commit {ref}\ncommitter T <t@x.org> 0 +0000\ndata {len(message)}\n{message}".encode()
        )
        stream += b"M 100644 inline README\ndata 2\nhi\n"
        for path, data in files.items():
            stream += f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n"
        subprocess.run(["git", "fast-import", "--quiet"], cwd=self.repo.path, input=bytes(stream),
                       check=True)  # fmt: skip
        return git(self.repo.path, "rev-parse", ref)

    @property
    def cache_file(self) -> Path:
        return self.repo.path / ".git" / "failgate" / parsecache.FILE_NAME


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return World(make_repo(tmp_path_factory.mktemp("cache") / "repo"))


@st.composite
def spread(draw: st.DrawFn) -> list[dict[str, bytes]]:
    """Events of a few entities over 2-3 revisions, superseding and following each other;
    some invalid (other bytes), some with an id held twice, some misnamed."""
    events: list[Event] = []
    for i in range(draw(st.integers(1, 7))):
        key = draw(st.sampled_from(KEYS))
        earlier = [e.id for e in events if e.entity_key == key]
        pick = st.sampled_from(earlier) if earlier else st.nothing()
        follows = tuple(sorted(set(draw(st.lists(pick, max_size=2))))) if earlier else ()
        events.append(
            Event(
                id=gid(i),
                entity_key=key,
                effective_at=WHEN,
                follows=follows,
                supersedes=tuple(draw(st.lists(pick, max_size=1))) if earlier else (),
                status=draw(st.sampled_from(list(Status))),
                title="t" if not follows else draw(st.sampled_from([None, "t2"])),
                triggers=draw(st.sampled_from(TRIGGERS[1:] if not follows else TRIGGERS)),
                applies_to=draw(st.sampled_from(SCOPES)),
            )
        )
    count = draw(st.integers(2, 3))
    revisions: list[dict[str, bytes]] = [{} for _ in range(count)]
    for event in events:
        data = event_to_toml(event)
        homes = draw(st.sets(st.integers(0, count - 1), min_size=1))
        for home in sorted(homes):
            damage = draw(st.integers(0, 9))
            if damage == 0:  # invalid: an unknown status, the same id with other bytes
                revisions[home][path_of(event)] = data.replace(b'status = "', b'status = "x', 1)
            elif damage == 1:  # the same id in another entity's folder
                revisions[home][f"ledger/svc/moved/{event.id}.toml"] = data
            elif damage == 2:  # no TOML at all
                revisions[home][path_of(event)] = b"schema = = 1\n"
            elif damage == 3:  # a name that is no event id
                revisions[home][path_of(event).replace(".toml", ".txt")] = data
            else:
                revisions[home][path_of(event)] = data
    return revisions


def decide(repo: GitRepo, request: Request, *, cache: bool = True) -> Decision:
    with pytest.MonkeyPatch.context() as patch:
        if not cache:
            patch.setattr(parsecache, "cache_path", lambda repo: None)
        return Evaluator(repo, Config()).evaluate(request)


def parses_nothing(patch: pytest.MonkeyPatch) -> None:
    def never(*args: object, **kw: object) -> object:
        raise AssertionError("parsed an event the cache holds")

    patch.setattr(union, "parse_event", never)


@given(spread(), st.data())
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])  # fmt: skip
def test_decisions_are_the_same_without_the_cache_filling_it_and_from_it(
    world: World, revisions: list[dict[str, bytes]], data: st.DataObject
) -> None:
    commits = [world.commit(files) for files in revisions]
    protected = data.draw(st.lists(st.booleans(), min_size=len(commits), max_size=len(commits)))
    revs = tuple(
        Revision(f"r{i}", commit, protected=i > 0 and protected[i])
        for i, commit in enumerate(commits)
    )
    context = data.draw(st.sampled_from(CONTEXTS))
    authority = data.draw(st.sampled_from(["accept", "protected"]))
    request = Request(commits[0], context, revs, authority=authority)
    with GitRepo.open(world.repo.path) as repo:
        without = decide(repo, request, cache=False)
        # what earlier examples kept: other ledgers, some entities with the same files
        assert decide(repo, request) == without
        world.cache_file.unlink(missing_ok=True)
        filling = decide(repo, request)
        with pytest.MonkeyPatch.context() as patch:
            parses_nothing(patch)
            kept = decide(repo, request)
    assert filling == without
    assert kept == without


# --------------------------------------------------------------------------- one ledger

LIVE = Event(id=gid(1), entity_key="ops:a", status=Status.OBSERVED, effective_at=WHEN,
             title="live", triggers=("push",))  # fmt: skip
LATER = Event(id=gid(2), entity_key="ops:a", status=Status.DIAGNOSED, effective_at=WHEN,
              follows=(LIVE.id,))  # fmt: skip
TYPO = Event(id=gid(3), entity_key="ops:a", status=Status.MITIGATED, effective_at=WHEN,
             follows=(LATER.id,), note="typo")  # fmt: skip
FIXED = Event(id=gid(4), entity_key="ops:a", status=Status.MITIGATED, effective_at=WHEN,
              follows=(LATER.id,), supersedes=(TYPO.id,), note="fixed")  # fmt: skip
OTHER = Event(id=gid(5), entity_key="svc:d", status=Status.OBSERVED, effective_at=WHEN,
              title="other", triggers=("deploy",))  # fmt: skip


def files_of(*events: Event) -> dict[str, bytes]:
    return {path_of(e): event_to_toml(e) for e in events}


def troubled(world: World) -> tuple[str, str]:
    """C and a protected main: supersession, an invalid event, an id in two entities."""
    main = world.commit(files_of(LIVE, LATER, OTHER))
    tip = world.commit(
        {
            **files_of(LIVE, LATER, TYPO, FIXED, OTHER),
            "ledger/svc/broken/" + gid(6) + ".toml": b'schema = 1\nid = "nope"\n',
            f"ledger/svc/moved/{OTHER.id}.toml": event_to_toml(OTHER),
        }
    )
    return tip, main


def union_of(world: World, *commits: str) -> Ledger:
    revisions = [Revision(f"r{i}", c, protected=i > 0) for i, c in enumerate(commits)]
    with GitRepo.open(world.repo.path) as repo:
        return read_union(repo, revisions, "ledger", MAX_EVENT_BYTES)


def test_a_ledger_with_invalid_events_duplicates_and_supersession_decides_alike(
    world: World,
) -> None:
    tip, main = troubled(world)
    revs = (Revision("C", tip), Revision("main", main, protected=True))
    world.cache_file.unlink(missing_ok=True)
    for context in CONTEXTS:
        request = Request(tip, context, revs)
        with GitRepo.open(world.repo.path) as repo:
            without = decide(repo, request, cache=False)
            filling = decide(repo, request)
            with pytest.MonkeyPatch.context() as patch:
                parses_nothing(patch)
                kept = decide(repo, request)
        assert filling == without and kept == without
        assert {p.code for p in without.errors} == {"duplicate-id"}
        assert without.exit_code == 4  # the invalid entity and the duplicate block


def test_a_new_event_parses_only_its_entity_again(world: World) -> None:
    main = world.commit(files_of(LIVE, LATER, OTHER))
    union_of(world, main)
    tip = world.commit(files_of(LIVE, LATER, TYPO, OTHER))
    parsed: list[str] = []
    with pytest.MonkeyPatch.context() as patch:
        parse = union.parse_event

        def counting(raw: bytes, path: str, **kw: str | None) -> object:
            parsed.append(path)
            return parse(raw, path, **kw)  # type: ignore[arg-type]

        patch.setattr(union, "parse_event", counting)
        union_of(world, tip, main)
    assert sorted(parsed) == sorted(path_of(e) for e in (LIVE, LATER, TYPO))


def test_the_same_blob_at_two_paths_is_kept_as_two_parses(world: World) -> None:
    # a parse depends on the path as well as the bytes: its problems name the file
    data = b'schema = 1\nid = "20260101T000000Z-00000abc"\n'
    one = "ledger/ops/a/20260101T000000Z-00000abc.toml"
    two = "ledger/svc/d/20260101T000000Z-00000abd.toml"
    commit = world.commit({one: data, two: data})
    first = union_of(world, commit)
    with pytest.MonkeyPatch.context() as patch:
        parses_nothing(patch)
        again = union_of(world, commit)
    for ledger in (first, again):
        assert ledger.files[one].oid == ledger.files[two].oid
        assert {p.path for p in ledger.files[one].problems} == {one}
        assert {p.path for p in ledger.files[two].problems} == {two}
    assert first.files == again.files


def test_the_same_bytes_under_another_name_are_parsed_again(world: World) -> None:
    # the id must match the file name: one blob is valid under one name only
    data = event_to_toml(LIVE)
    valid = world.commit({path_of(LIVE): data})
    renamed = world.commit({path_of(LIVE).replace(LIVE.id, gid(9)): data})
    assert union_of(world, valid).files[path_of(LIVE)].event == LIVE
    (file,) = union_of(world, renamed).files.values()
    assert file.event is None and {p.key for p in file.problems} == {"id"}


# --------------------------------------------------------------------------- the file


def kept_entities(world: World) -> dict[bytes, object]:
    data = pickle.loads(world.cache_file.read_bytes())
    assert data["version"] == parsecache.format_version()
    return data["entities"]  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    "damage",
    [
        lambda kept: b"",
        lambda kept: b"not a pickle at all",
        lambda kept: kept[: len(kept) // 2],
        lambda kept: pickle.dumps(["a", "list"]),
        lambda kept: pickle.dumps({**pickle.loads(kept), "version": "0.0.0-3.11.0-0"}),
    ],
    ids=["empty", "garbage", "truncated", "not-a-dict", "another-version"],
)
def test_a_bad_cache_file_is_rebuilt_never_believed(
    world: World, damage: Callable[[bytes], bytes]
) -> None:
    tip, main = troubled(world)
    world.cache_file.unlink(missing_ok=True)
    clean = union_of(world, tip, main)
    world.cache_file.write_bytes(damage(world.cache_file.read_bytes()))
    assert union_of(world, tip, main).files == clean.files
    assert kept_entities(world)  # rewritten, in this version


def test_a_kept_value_of_the_wrong_shape_is_parsed_again(world: World) -> None:
    commit = world.commit(files_of(LIVE, LATER, OTHER))
    world.cache_file.unlink(missing_ok=True)
    clean = union_of(world, commit)
    entities = kept_entities(world)
    for key in entities:
        entities[key] = [("not an event", [])]
    data = {"version": parsecache.format_version(), "entities": entities}
    world.cache_file.write_bytes(pickle.dumps(data))
    assert union_of(world, commit).files == clean.files


def test_an_unwritable_cache_is_no_cache_and_no_failure(world: World) -> None:
    commit = world.commit(files_of(LIVE, LATER))
    world.cache_file.unlink(missing_ok=True)
    folder = world.cache_file.parent
    aside = folder.with_name("failgate-aside")
    folder.rename(aside)
    folder.write_text("a file where the cache folder goes\n")
    try:
        first = union_of(world, commit)
        assert union_of(world, commit).files == first.files
        assert folder.is_file()
    finally:
        folder.unlink()
        aside.rename(folder)


def test_what_a_read_did_not_use_goes_once_it_outnumbers_what_it_used(world: World) -> None:
    world.cache_file.unlink(missing_ok=True)
    small = world.commit(files_of(LIVE))
    big = world.commit(files_of(OTHER, *[replace_key(LIVE, f"ops:k{i}") for i in range(3)]))
    union_of(world, small)
    union_of(world, big)
    assert len(kept_entities(world)) == 5  # one unused, fewer than the four used: kept
    union_of(world, small)  # a hit: nothing new, the file is not written
    assert len(kept_entities(world)) == 5
    union_of(world, world.commit(files_of(LATER)))
    assert len(kept_entities(world)) == 1  # five unused, more than the one used: gone


def replace_key(event: Event, key: str) -> Event:
    return event._replace(entity_key=key)


def test_sources_that_cannot_be_read_mean_no_cache(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unreadable() -> str:
        raise FileNotFoundError("installed without its sources")

    commit = world.commit(files_of(LIVE, LATER))
    world.cache_file.unlink(missing_ok=True)
    monkeypatch.setattr(parsecache, "format_version", unreadable)
    assert union_of(world, commit).files[path_of(LIVE)].event == LIVE
    assert not world.cache_file.exists()


def test_a_commit_without_event_files_opens_no_cache(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(repo: GitRepo) -> None:
        raise AssertionError("opened the cache for a ledger without events")

    monkeypatch.setattr(union.ParseCache, "open", never)
    commit = world.commit({"ledger/ops/a/notes.toml": b"no event here\n"})
    assert union_of(world, world.commit({})).files == {}
    assert [p.code for f in union_of(world, commit).files.values() for p in f.problems] == [
        "bad-file-name"
    ]


def test_the_format_version_covers_every_source_that_makes_a_kept_entry() -> None:
    """A kept entry is a file bounded and parsed by the ledger read, then resolved: a
    change to any of those rules must make an older cache file another version."""
    import inspect

    from failgate_hooks.core import resolve, validate

    makers = [union._parse_bounded, union._parse_event_files, validate.parse_event, resolve]
    digested = {path.resolve() for path in parsecache.rule_sources()}
    for maker in makers:
        source = inspect.getsourcefile(maker)
        assert source is not None and Path(source).resolve() in digested, source
