"""Hostile text on every output path: nothing read is ever a terminal instruction.

One world holds hostile text everywhere failgate reads text from: event titles,
notes, names and evidence; a verifier's argv and its output; ledger file and
folder names; commit subjects and authors. Each test below takes one output
path and asserts that no escape, C0/C1 control or bidi control reaches it,
while the visible words around them still do.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from failgate_hooks.app.export import export_ledger
from failgate_hooks.core.events import (
    Event,
    Evidence,
    EvidenceKind,
    Status,
    Verification,
    event_to_toml,
)
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.render.export import render_export_json, render_export_markdown
from tests.conftest import Repo, git, make_repo

# Each payload hides a visible word (upper case) among the sequences a terminal
# would act on: SGR colour, 8-bit CSI, an OSC title set and an OSC 8 hyperlink,
# DCS, bidi overrides and isolates, a carriage return that would overwrite the
# line, BEL, backspace, DEL and NEL, tag characters and a zero-width space.
HOSTILE = (
    "A\x1b[31mRED\x1b[0m "
    "\x9b31mCSI8 "
    "\x1b]0;pwned\x07TITLE "
    "\x1b]8;;http://evil.example\x1b\\LINK\x1b]8;;\x1b\\ "
    "\x1bP1$qmDCSBODY\x1b\\DCS "
    "\u202eEVIL\u202c \u2066ISO\u2069 \u200fRLM "
    "SAFE\rOVER "
    "BEL\x07 BS\x08 DEL\x7f NEL\x85 ESC\x1bc "
    "\U000e0001\U000e0074\U000e0061\U000e0067\U000e007fTAG ZERO\u200bWIDTH"
)
VISIBLE = ["RED", "CSI8", "TITLE", "LINK", "DCS", "EVIL", "ISO", "OVER", "TAG", "ZEROWIDTH"]
# What the sequences carried must go with them, not only their ESC.
GONE = ["pwned", "evil.example", "DCSBODY", "31m"]

# A value quoted by repr() or JSON, its controls written as inert escapes.
REPR = re.compile(r"""(['"])(?:(?!\1)[^\n])*\\(?:x[0-9a-f]{2}|u[0-9a-f]{4})(?:(?!\1)[^\n])*\1""")
UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u202a-\u202e\u2066-\u2069"
    "\U000e0000-\U000e007f]"
)

KEY = "ops:hostile"
WHEN = dt.datetime(2026, 11, 29, 23, 5, tzinfo=dt.UTC)
VERIFIER = f"""\
import sys
sys.stdout.buffer.write({HOSTILE.encode()!r} + b"\\n")
sys.stdout.buffer.write(b"raw 8-bit CSI \\x9b and invalid UTF-8 \\xff\\xfe\\n")
sys.stdout.buffer.write(b"TAILWORD\\n")
sys.exit(0 if open("state.txt").read().strip() == "fixed" else 1)
"""
HOSTILE_FILE = "ledger/ops/weird/\x1b]0;pwned\x07\u202eNAME.toml"
HOSTILE_FOLDER = "ledger/\x1b[31mFOLDER\u202e/20261129T230500Z-0000000a.toml"


def assert_clean(text: str, *, visible: tuple[str, ...] = ()) -> None:
    """No escape, control (but newline and tab) or bidi control; the payload's words survive."""
    found = UNSAFE.search(text)
    assert found is None, (
        f"{found.group()!r} at {found.start()}: {text[max(0, found.start() - 60) : found.start() + 20]!r}"
    )
    # A message may quote a bad value with repr() or JSON: its escapes are then inert text.
    unquoted = REPR.sub("", text)
    for word in GONE:
        assert word not in unquoted, f"{word!r}, carried by an escape sequence, was printed"
    for word in visible:
        assert word in text, f"{word!r} should still be visible"


def assert_clean_json(raw: str, *, visible: tuple[str, ...] = ()) -> object:
    """The raw JSON and every decoded string in it are clean."""
    assert_clean(raw)
    doc = json.loads(raw)
    assert_clean(json.dumps(doc, ensure_ascii=False), visible=visible)
    return doc


@dataclass
class World:
    repo: Repo
    parent: str
    repair: str
    tmp: Path


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    """Parent (broken), repair (fixed, hostile subject and author), ledger, then broken again."""
    tmp = tmp_path_factory.mktemp("hostile")
    repo = make_repo(tmp / "work")
    repo.write("checks/hostile.py", VERIFIER)
    repo.write("state.txt", "broken\n")
    parent = repo.commit(f"parent {HOSTILE}")
    repo.write("state.txt", "fixed\n")
    repo.git("add", "-A")
    subprocess.run(
        ["git", "commit", "-q", "-m", f"repair {HOSTILE}"], cwd=repo.path, check=True,
        env={**os.environ, "GIT_AUTHOR_NAME": f"Eve {HOSTILE}"},
    )  # fmt: skip
    repair = repo.head()
    check = Verification(
        command=("python3", "checks/hostile.py", HOSTILE), files=("checks/hostile.py",)
    )
    first = Event(
        id="20261129T230500Z-00000001", entity_key=KEY, status=Status.OBSERVED,
        effective_at=WHEN, title=f"Title {HOSTILE}", triggers=("push", "deploy"),
        note=f"Note {HOSTILE}\nsecond line {HOSTILE}", recorded_by=f"Mallory {HOSTILE}",
        verification=check,
        evidence=Evidence(EvidenceKind.COMMAND, commit=parent, exit_code=1, output_tail=HOSTILE),
    )  # fmt: skip
    second = Event(
        id="20261129T230501Z-00000002", entity_key=KEY, status=Status.DIAGNOSED,
        effective_at=WHEN, follows=(first.id,), note=HOSTILE,
        evidence=Evidence(EvidenceKind.HUMAN, commit=repair, confirmed_by=f"Eve {HOSTILE}"),
    )  # fmt: skip
    for event in (first, second):
        target = repo.path / "ledger/ops/hostile" / f"{event.id}.toml"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(event_to_toml(event))
    repo.write(HOSTILE_FILE, "title = 1\n")
    repo.write(HOSTILE_FOLDER, "title = 1\n")
    repo.write("state.txt", "broken\n")
    repo.commit("record the hostile entity, and break it again")
    return World(repo, parent, repair, tmp)


def run(world: World, *args: str) -> tuple[int, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "failgate_hooks", *args], cwd=world.repo.path,
        capture_output=True, check=False, timeout=300,
    )  # fmt: skip
    out = (proc.stdout + proc.stderr).decode("utf-8")  # strict: failgate prints UTF-8
    assert "Traceback" not in out, out
    return proc.returncode, out


# --------------------------------------------------------------------------- one test per path


def test_check_text(world: World) -> None:
    code, out = run(world, "check", "--trust-ledger", "--ref", "refs/heads/main")
    assert code == 4, out
    assert_clean(out, visible=(*VISIBLE, "TAILWORD", "NAME", "FOLDER", "Title A"))


def test_check_json(world: World) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "failgate_hooks", "check", "--json", "--trust-ledger"],
        cwd=world.repo.path, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    doc = assert_clean_json(proc.stdout, visible=(*VISIBLE, "TAILWORD", "NAME", "FOLDER"))
    assert isinstance(doc, dict) and doc["decision"] == "integrity"
    assert_clean(proc.stderr)


def test_gates_text(world: World) -> None:
    _, out = run(world, "gates", "--trigger", "deploy")
    assert_clean(out, visible=("Title A", "NAME", "FOLDER"))


def test_fsck_text(world: World) -> None:
    code, out = run(world, "fsck")
    assert code == 4, out
    assert_clean(out, visible=("NAME", "FOLDER"))


def test_fsck_json(world: World) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "failgate_hooks", "fsck", "--json"], cwd=world.repo.path,
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 4
    assert_clean_json(proc.stdout, visible=("NAME", "FOLDER"))


def test_log_text(world: World) -> None:
    code, out = run(world, "log", KEY)
    assert code == 0, out
    assert_clean(out, visible=("Title A", "Note A", "second line A", "Mallory A", *VISIBLE))


def test_log_json(world: World) -> None:
    code, out = run(world, "log", KEY, "--json")
    assert code == 0, out
    assert_clean_json(out, visible=("Title A", "Mallory A", *VISIBLE))


def test_error_messages(world: World) -> None:
    code, out = run(world, "check", "--rev", f"nope{HOSTILE}")
    assert code == 4, out
    assert_clean(out)
    code, out = run(world, "record", f"bad{HOSTILE}", "--status", "observed")
    assert code == 2, out
    assert_clean(out)


def test_trust_listing(world: World) -> None:
    _, out = run(world, "trust", "--all")
    assert_clean(out, visible=("checks/hostile.py", "RED"))


def test_export_markdown(world: World) -> None:
    with GitRepo.open(world.repo.path) as repo:
        text = render_export_markdown(export_ledger(repo))
    assert_clean(text, visible=("Title A", "Note A", "Mallory A", "NAME", "FOLDER", *VISIBLE))


def test_export_json(world: World) -> None:
    with GitRepo.open(world.repo.path) as repo:
        raw = render_export_json(export_ledger(repo))
    assert_clean_json(raw, visible=("Title A", "Note A", "Mallory A", "NAME", *VISIBLE))


def test_export_through_the_cli(world: World) -> None:
    code, markdown = run(world, "export")
    assert code == 0, markdown
    assert_clean(markdown, visible=("Title A", "Note A", "NAME", "FOLDER", *VISIBLE))
    code, raw = run(world, "export", "--format", "json")
    assert code == 0, raw
    assert_clean_json(raw, visible=("Title A", "Note A", "NAME", *VISIBLE))


def test_replay_receipt_text_and_json(world: World) -> None:
    from failgate_hooks.app.replay import replay
    from failgate_hooks.render.replay import render_receipt, render_replay_json, render_replay_text

    with GitRepo.open(world.repo.path) as repo:
        report = replay(repo, f"{world.parent}..{world.repair}", KEY)
    assert report.ok, report.reasons
    receipt = render_receipt(report)
    assert_clean(receipt, visible=("Eve A", "repair A", "TAILWORD", *VISIBLE))
    assert_clean(render_replay_text(report), visible=("Eve A", "repair A"))
    assert_clean_json(render_replay_json(report), visible=("Eve A", "repair A"))


def _bare(world: World, name: str) -> Path:
    remote = world.tmp / name
    git(world.tmp, "init", "-q", "--bare", "-b", "main", str(remote))
    return remote


def test_the_pushers_terminal_through_the_server_hook(world: World) -> None:
    """What pre-receive prints reaches the pusher as git's `remote:` lines, unfiltered by git."""
    remote = _bare(world, "server.git")
    clone = world.tmp / "server-clone"
    git(world.tmp, "clone", "-q", str(world.repo.path), str(clone))
    git(clone, "push", "-q", str(remote), f"{world.parent}:refs/heads/main")
    hook = remote / "hooks" / "pre-receive"
    call = "from failgate_hooks.commands.cli import pre_receive_main; pre_receive_main()"
    hook.write_text(f"#!/bin/sh\nexec {sys.executable} -c '{call}' --exec\n")
    hook.chmod(0o755)
    proc = subprocess.run(
        ["git", "push", "--no-verify", str(remote), "HEAD:refs/heads/main"], cwd=clone,
        capture_output=True, check=False, timeout=300,
    )  # fmt: skip
    out = proc.stderr.decode("utf-8")
    assert proc.returncode != 0, out
    assert "remote: " in out and "Traceback" not in out
    assert_clean(out, visible=("Title A", "TAILWORD", "NAME", *VISIBLE))


def test_the_pushers_terminal_through_the_client_hook(world: World) -> None:
    remote = _bare(world, "plain.git")
    clone = world.tmp / "client-clone"
    git(world.tmp, "clone", "-q", str(world.repo.path), str(clone))
    git(clone, "push", "-q", "--no-verify", str(remote), f"{world.parent}:refs/heads/main")
    installed = subprocess.run(
        [sys.executable, "-m", "failgate_hooks", "install"], cwd=clone, capture_output=True,
        check=False,
    )  # fmt: skip
    assert installed.returncode == 0
    proc = subprocess.run(
        ["git", "push", str(remote), "HEAD:refs/heads/main"], cwd=clone, capture_output=True,
        check=False, timeout=300, env={**os.environ, "FAILGATE_TRUST_LEDGER": "1"},
    )  # fmt: skip
    out = (proc.stdout + proc.stderr).decode("utf-8")
    assert proc.returncode != 0, out
    assert_clean(out, visible=("Title A", "TAILWORD", *VISIBLE))
