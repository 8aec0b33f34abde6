"""What keeps the hook fast as the ledger grows (issue 11): constant git work, a parse cache
by blob id, and nothing heavy imported on the hook's path. `make bench` measures the times;
these tests guard the properties the times rest on."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from bench import build
from failgate_hooks import parsecache
from failgate_hooks.collector import program_run
from failgate_hooks.core.events import Status
from failgate_hooks.core.validate import parse_event
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger import union as ledger_module
from failgate_hooks.ledger.union import Ledger, Revision, read_union

CHECK = ("check", "--trigger", "push", "--ref", "refs/heads/main")


def failgate(world: build.World, *args: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "failgate_hooks", *args],
        cwd=world.work, capture_output=True, text=True, check=False,
        env={**os.environ, **(env or {})}, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def ready(world: build.World) -> build.World:
    """The live gate's verifier trusted and run once (its pass cached), the hook installed."""
    failgate(world, "trust", "--all", "--yes")
    failgate(world, *CHECK)
    failgate(world, "install")
    return world


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> dict[int, build.World]:
    """The same project with a ledger of 10 events and of 300 (one live gate in each)."""
    root = tmp_path_factory.mktemp("worlds")
    return {n: ready(build.ledger_world(root / str(n), n)) for n in (10, 300)}


# ---------------------------------------------------------------------------- git processes


@pytest.fixture
def git_log(tmp_path: Path) -> Iterator[tuple[dict[str, str], Path]]:
    """An environment whose `git` is a shim that logs each call, then runs the real git."""
    real = shutil.which("git")
    assert real is not None
    shims = tmp_path / "shims"
    shims.mkdir()
    log = tmp_path / "git.log"
    shim = shims / "git"
    shim.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    shim.chmod(0o755)
    yield {"PATH": f"{shims}{os.pathsep}{os.environ['PATH']}"}, log


def subcommand(argv: list[str]) -> str:
    """`git -c k=v log …` -> `log`; `git-receive-pack /path` -> `git-receive-pack`."""
    words = list(argv)
    while words[:1] == ["-c"]:
        words = words[2:]
    words = [w for w in words if not w.startswith("-") and "/" not in w]
    return words[0] if words else "(none)"


def calls(log: Path) -> Counter[str]:
    """The git subcommands the shim logged, counted."""
    counted = Counter(subcommand(line.split()) for line in log.read_text().splitlines())
    log.unlink()
    return counted


def test_check_starts_as_many_git_processes_for_300_events_as_for_10(
    worlds: dict[int, build.World], git_log: tuple[dict[str, str], Path]
) -> None:
    env, log = git_log
    counted = {}
    for events, world in worlds.items():
        failgate(world, *CHECK, env=env)
        counted[events] = calls(log)
    assert counted[10] == counted[300]
    assert counted[10]["ls-tree"] <= 3, counted[10]  # config, ledger, the tree for `paths`


def test_check_with_a_cold_parse_cache_starts_no_more_git_processes_than_warm(
    worlds: dict[int, build.World], git_log: tuple[dict[str, str], Path]
) -> None:
    env, log = git_log
    world = worlds[300]
    failgate(world, *CHECK, env=env)
    warm = calls(log)
    shutil.rmtree(world.work / ".git" / "failgate" / "parsed")
    failgate(world, *CHECK, env=env)
    assert calls(log) == warm  # every blob read through the one cat-file


def trace2_starts(world: build.World, *push_args: str) -> Counter[str]:
    """The git processes one real `git push` starts, hook included, from git's trace2 events."""
    build.git(world.remote, "update-ref", "refs/heads/main", world.base)
    build.git(world.work, "update-ref", "refs/remotes/origin/main", world.base)
    trace = world.work.parent / "trace2.json"
    proc = subprocess.run(
        ["git", "push", "-q", "origin", "main", *push_args], cwd=world.work,
        capture_output=True, text=True, check=False,
        env={**os.environ, "GIT_TRACE2_EVENT": str(trace)}, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    counted: Counter[str] = Counter()
    for line in trace.read_text().splitlines():
        event = json.loads(line)
        if event.get("event") == "start":
            argv = event["argv"]
            counted[subcommand(argv[1:]) if argv[0] == "git" else os.path.basename(argv[0])] += 1
    trace.unlink()
    return counted


def test_a_push_through_the_hook_starts_as_many_git_processes_for_300_events_as_for_10(
    worlds: dict[int, build.World],
) -> None:
    counted = {}
    for events, world in worlds.items():
        trace2_starts(world)  # warm-up: the first push may fill caches
        counted[events] = trace2_starts(world)
    assert counted[10] == counted[300]
    hook = counted[10] - trace2_starts(worlds[10], "--no-verify")
    assert hook["cat-file"] == 1, hook  # one persistent cat-file, however many blobs


# ---------------------------------------------------------------------------- the parse cache


class CountingRepo(GitRepo):
    """A repository that counts the blobs git gives in batches."""

    blobs_read = 0

    def iter_blobs(
        self, oids: Iterable[str], *, missing_ok: bool = False
    ) -> Iterator[tuple[str, bytes]]:
        for found in super().iter_blobs(oids, missing_ok=missing_ok):
            self.blobs_read += 1
            yield found


def read(world: build.World) -> tuple[Ledger, int]:
    """The ledger at the pushed commit in a fresh state, and how many blobs git had to give."""
    ledger_module._parsed.clear()  # as a new process would start
    with CountingRepo.open(world.work) as repo:
        ledger = read_union(repo, [Revision("tip", world.tip)], build.LEDGER)
        assert isinstance(repo, CountingRepo)
        return ledger, repo.blobs_read


def shards(world: build.World) -> list[Path]:
    return sorted((world.work / ".git" / "failgate" / "parsed").glob("*.json"))


def summary(ledger: Ledger) -> dict[str, object]:
    return {path: (f.event, f.problems) for path, f in ledger.files.items()}


@pytest.fixture
def small(tmp_path: Path) -> build.World:
    """40 events, one of them invalid in two ways, and the parse cache empty."""
    world = build.ledger_world(tmp_path / "small", 40)
    folder = f"{build.LEDGER}/svc/area-00/risk-00000"
    broken = f"{folder}/20260101T000000Z-0000bad1.toml"
    unreadable = f"{folder}/20260101T000000Z-0000bad2.toml"
    text = (
        'schema = 1\nid = "not-an-id"\nentity_key = "svc:elsewhere"\nstatus = "lost"\n'
        "effective_at = 2026-01-01T00:00:00+01:00\n"
    )
    build.fast_import(
        world.work, "main",
        [build.Commit("two bad events", {broken: text.encode(), unreadable: b"schema = = 1\n"})],
        first_date=build.EPOCH + 3 * 86_400,
    )  # fmt: skip
    world.tip = build.git(world.work, "rev-parse", "main")
    shutil.rmtree(world.work / ".git" / "failgate" / "parsed", ignore_errors=True)
    return world


def test_the_second_read_takes_every_event_from_the_parse_cache(small: build.World) -> None:
    first, read_first = read(small)
    assert read_first == len(first.files) == 42
    assert shards(small)
    again, read_again = read(small)
    assert read_again == 0
    assert summary(again) == summary(first)


def test_the_cache_gives_back_events_and_problems_exactly(small: build.World) -> None:
    first, _ = read(small)
    again, _ = read(small)
    invalid = [f for f in again.files.values() if f.problems]
    assert len(invalid) == 2
    assert {p.code for f in invalid for p in f.problems} >= {"unreadable", "invalid-event"}
    for path, file in first.files.items():
        assert again.files[path].event == file.event
        assert repr(again.files[path].event) == repr(file.event)
        assert again.files[path].problems == file.problems


def test_a_corrupt_shard_is_parsed_again_and_rewritten(small: build.World) -> None:
    first, _ = read(small)
    shard = next(s for s in shards(small) if b"Risk" in s.read_bytes())
    # still JSON, still a valid event: only the checksum can tell
    data = shard.read_bytes().replace(b"Risk", b"Rusk", 1)
    shard.write_bytes(data)
    again, read_again = read(small)
    assert read_again > 0
    assert summary(again) == summary(first)
    assert shard.read_bytes() != data
    _, read_third = read(small)
    assert read_third == 0


def test_a_shard_of_another_version_is_rebuilt(small: build.World) -> None:
    read(small)
    shard = shards(small)[0]
    header, _, rest = shard.read_bytes().partition(b"\n")
    shard.write_bytes(header.rsplit(b" ", 1)[0] + b" 0-0-0.0.0-0000000000000000\n" + rest)
    _, read_again = read(small)
    assert read_again > 0
    assert shard.read_bytes().startswith(header + b"\n")


def test_a_record_of_the_wrong_shape_is_never_trusted(small: build.World) -> None:
    """A shard another process wrote with a good checksum but a bad record: parsed again."""
    first, _ = read(small)
    shard = shards(small)[0]
    header, _, rest = shard.read_bytes().partition(b"\n")
    entries = json.loads(rest.partition(b"\n")[2])
    oid = next(oid for oid, variants in entries.items() if variants[0][2][0] is not None)
    entries[oid][0][2][0][2] = "retired-for-good"  # an unknown status
    body = json.dumps(entries).encode()
    checksum = hashlib.sha256(body).hexdigest().encode()
    shard.write_bytes(header + b"\n" + checksum + b"\n" + body)
    again, read_again = read(small)
    assert read_again == 1
    assert summary(again) == summary(first)


def test_the_same_blob_at_two_paths_is_cached_as_two_parses(small: build.World) -> None:
    """A parse depends on the path as well as the bytes: its problems name the file."""
    data = b'schema = 1\nid = "20260101T000000Z-00000abc"\n'
    one = f"{build.LEDGER}/svc/area-00/risk-00000/20260101T000000Z-00000abc.toml"
    two = f"{build.LEDGER}/svc/area-99/risk-00099/20260101T000000Z-00000abd.toml"
    build.fast_import(
        small.work, "main", [build.Commit("one blob, two files", {one: data, two: data})],
        first_date=build.EPOCH + 4 * 86_400,
    )  # fmt: skip
    small.tip = build.git(small.work, "rev-parse", "main")
    first, _ = read(small)
    assert first.files[one].oid == first.files[two].oid
    assert {p.path for p in first.files[one].problems} == {one}
    assert {p.path for p in first.files[two].problems} == {two}
    assert "id" not in {p.key for p in first.files[one].problems}  # its stem: valid there
    assert "id" in {p.key for p in first.files[two].problems}
    again, read_again = read(small)
    assert read_again == 0
    assert summary(again) == summary(first)


@pytest.mark.parametrize(
    "record",
    [
        None,
        [],
        [None, None],
        [[1, 2, 3], []],
        [None, [["code", "message"]]],
        [None, [["code", "message", None, None, None, 7]]],
    ],
)
def test_decoding_refuses_what_is_not_a_parse(record: object) -> None:
    with pytest.raises(parsecache._Corrupt):
        parsecache.decode_parsed(record)


def test_an_unwritable_cache_is_no_cache(small: build.World) -> None:
    folder = small.work / ".git" / "failgate"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "parsed").write_text("a file where the cache folder goes\n")
    first, read_first = read(small)
    again, read_again = read(small)
    assert read_first == read_again == 42
    assert summary(again) == summary(first)


def test_every_field_of_an_event_survives_the_cache() -> None:
    raw = b"""schema = 1
id = "20261129T230500Z-7f3a9c1e"
entity_key = "deploy:mainnet:gas-budget"
status = "verified"
follows = ["20261129T220500Z-00000001"]
effective_at = 2026-11-29T23:05:00.123456+05:30
title = "Gas budget must scale with module count"
triggers = ["push", "deploy"]
supersedes = ["20261129T210500Z-00000002"]
retracts = ["20261129T200500Z-00000003"]
recorded_by = "Ada <ada@example.org>"
note = "six modules, budget sized for two and a half"

[applies_to]
since = "9f2a1c4e9f2a1c4e9f2a1c4e9f2a1c4e9f2a1c4e"
paths = ["deploy/**"]
refs = ["refs/heads/main"]
environments = ["mainnet"]

[verification]
command = ["python", "checks/check_gas_budget.py"]
files = ["checks/check_gas_budget.py"]
timeout_s = 120
inputs = ["deploy/*.json"]
env_pass = ["NODE_OPTIONS"]
workdir = "inplace"

[evidence]
kind = "human"
commit = "4d1e0b2f4d1e0b2f4d1e0b2f4d1e0b2f4d1e0b2f"
confirmed_by = "Ada <ada@example.org>"
"""
    path = "ledger/deploy/mainnet/gas-budget/20261129T230500Z-7f3a9c1e.toml"
    parsed = parse_event(raw, path, entity_key="deploy:mainnet:gas-budget")
    assert parsed[0] is not None and parsed[0].status is Status.VERIFIED
    data = json.loads(json.dumps(parsecache.encode_parsed(parsed)))
    event, problems = parsecache.decode_parsed(data)
    assert (event, problems) == parsed
    assert repr(event) == repr(parsed[0])
    assert (
        event is not None and event.effective_at.utcoffset() == parsed[0].effective_at.utcoffset()
    )


def test_the_codec_holds_every_field_type_of_an_event() -> None:
    """A field type the cache cannot hold fails here, not silently in a user's push."""
    parsecache.check_codec()


def test_a_field_type_the_codec_cannot_hold_turns_the_cache_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def cannot() -> None:
        raise TypeError("cannot cache dict[str, str]")

    monkeypatch.setattr(parsecache, "check_codec", cannot)
    assert parsecache.ParseCache(str(tmp_path)).folder is None


# ---------------------------------------------------------------------------- imports


HEAVY = (
    "tomli_w",  # writes TOML
    "failgate_hooks.core.credentials",  # scans for credentials
    "failgate_hooks.app.export",  # renders Markdown for agents
    "failgate_hooks.app.replay",  # Markdown receipts, progress bars
    "failgate_hooks.app.ci",  # step summaries in Markdown
    "failgate_hooks.ledger.write",  # writes events
    "click._termui_impl",  # click's progress bars
)

_RUN = """\
import json, sys
{call}
json.dump(sorted(sys.modules), open({out!r}, "w"))
"""


def modules_after(world: build.World, call: str, stdin: str = "") -> set[str]:
    out = world.work.parent / "modules.json"
    script = _RUN.format(call=call, out=str(out))
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=world.work, input=stdin, capture_output=True,
        text=True, check=False, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(out.read_text()))


def test_the_hook_imports_nothing_that_writes_renders_markdown_or_scans(
    worlds: dict[int, build.World],
) -> None:
    world = worlds[300]
    call = (
        # what `failgate install`'s script and the console script import
        "from failgate_hooks.commands.hooks import pre_push_main\n"
        "try:\n"
        f"    pre_push_main(['origin', {str(world.remote)!r}])\n"
        "except SystemExit as exit:\n"
        "    assert not exit.code, exit.code\n"
    )
    stdin = f"refs/heads/main {world.tip} refs/heads/main {world.base}\n"
    loaded = modules_after(world, call, stdin)
    assert "failgate_hooks.app.evaluate" in loaded  # the hook did decide
    assert not loaded & set(HEAVY)
    # a hook prints plain text: click is a fifth of the floor's import time
    assert "click" not in loaded


def test_check_imports_nothing_that_writes_renders_markdown_or_scans(
    worlds: dict[int, build.World],
) -> None:
    world = worlds[300]
    call = (
        "from failgate_hooks.commands.cli import main\n"
        "try:\n"
        f"    main({list(CHECK)!r}, prog_name='failgate')\n"
        "except SystemExit as exit:\n"
        "    assert not exit.code, exit.code\n"
    )
    loaded = modules_after(world, call)
    assert "failgate_hooks.app.evaluate" in loaded
    assert not loaded & set(HEAVY)


# ---------------------------------------------------------------------------- the collector


def test_a_program_run_leaves_the_exit_collection_nothing_to_walk() -> None:
    try:
        with program_run():
            made = [[i] for i in range(50_000)]  # a run's objects, alive at its end
            assert not gc.isenabled()
        assert len(gc.get_objects()) < len(made)  # frozen: out of the collector's sight
        assert not gc.isenabled()  # the process exits next: nothing to collect for
    finally:
        gc.unfreeze()
        gc.enable()


# What a program's exit collection would walk, said just before it runs (atexit
# handlers run first): the objects the collector can still see.
_AT_EXIT = """\
import atexit, gc, sys
atexit.register(lambda: sys.stderr.write(f"\\nvisible={{len(gc.get_objects())}}\\n"))
{call}
"""


@pytest.mark.parametrize(
    "call",
    [
        "import runpy; runpy.run_module('failgate_hooks', run_name='__main__')",
        "from failgate_hooks.commands.cli import run; run()",  # the console script
        "from failgate_hooks.commands.hooks import pre_push_main; pre_push_main()",
    ],
)
def test_the_programs_exit_without_walking_their_objects(
    worlds: dict[int, build.World], call: str
) -> None:
    world = worlds[300]
    argv = list(CHECK) if "pre_push" not in call else ["origin", str(world.remote)]
    stdin = f"refs/heads/main {world.tip} refs/heads/main {world.base}\n"
    proc = subprocess.run(
        [sys.executable, "-c", _AT_EXIT.format(call=call), *argv], cwd=world.work,
        input=stdin, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    visible = int(proc.stderr.rsplit("visible=", 1)[1])
    # a check at 300 events leaves over 100,000 objects: a few hundred stay in sight
    assert visible < 2_000, proc.stderr


def test_a_fresh_clone_s_parse_cache_opens_no_shard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # no parsed/ folder yet: a lookup of thousands of blobs tries no file at all
    opened: list[str] = []
    monkeypatch.setattr(parsecache, "_read_shard", lambda path, version: opened.append(path))
    keys = [(f"{i % 256:02x}{i:038x}", f"ledger/a/{i}.toml", "a") for i in range(4096)]
    assert parsecache.ParseCache(str(tmp_path)).lookup(keys) == {}
    assert opened == []
    (tmp_path / "failgate" / "parsed").mkdir(parents=True)
    parsecache.ParseCache(str(tmp_path)).lookup(keys)
    assert len(opened) == 256  # with the folder there, each shard is tried once
