"""The pass cache on real files: versioned keys over every part, and misses, never errors."""

from __future__ import annotations

import json
from pathlib import Path

from failgate_hooks.app import demo
from failgate_hooks.core.events import Verification
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.verify.keys import content_key
from failgate_hooks.verify.passcache import PassCache, pass_key
from failgate_hooks.verify.pins import resolve_pins
from failgate_hooks.verify.subject import gate_run
from failgate_hooks.verify.trust import TrustStore
from tests.worlds import KEY, budget_repo, fix_budget, record_failure

ARGV = ("python", "checks/check.py")
PINS = [("checks/check.py", "a" * 40), ("checks/lib.py", "b" * 40)]


FP = "f" * 64


def test_pass_keys_are_versioned_and_cover_every_part() -> None:
    base = pass_key(FP, "deploy:gas", "mainnet", "ck1:00")
    assert base.startswith("pc7-")
    others = [
        pass_key("e" * 64, "deploy:gas", "mainnet", "ck1:00"),
        pass_key(FP, "deploy:other", "mainnet", "ck1:00"),
        pass_key(FP, "deploy:gas", None, "ck1:00"),
        pass_key(FP, "deploy:gas", "", "ck1:00"),
        pass_key(FP, "deploy:gas", "mainnet", "ck1:01"),
        pass_key(FP, "deploy:gas", "mainnet", "ik1:00"),
        pass_key(FP, "deploy:gas", "mainnet", "ck1:00", "bwrap"),
    ]
    assert len({base, *others}) == 1 + len(others)


def test_a_recorded_pass_is_found_and_a_damaged_one_is_a_miss(tmp_path: Path) -> None:
    cache = PassCache(str(tmp_path))
    key = pass_key(FP, "deploy:gas", None, "ck1:00")
    assert cache.lookup(key) is None
    assert cache.record(key, commit="c" * 40, duration_s=0.5) is None
    hit = cache.lookup(key)
    assert hit is not None and (hit.commit, hit.duration_s) == ("c" * 40, 0.5)
    entry = tmp_path / "failgate/cache" / key
    entry.write_text("garbage")
    assert cache.lookup(key) is None
    other = pass_key(FP, "deploy:gas", None, "ck1:01")
    entry.write_text(json.dumps({"key": other, "commit": "c" * 40}))
    assert cache.lookup(key) is None  # a file under the wrong name proves nothing


def test_an_unwritable_cache_reports_instead_of_raising(tmp_path: Path) -> None:
    (tmp_path / "failgate").mkdir()
    (tmp_path / "failgate/cache").write_text("not a folder")
    cache = PassCache(str(tmp_path))
    why = cache.record("pc3-x", commit="c" * 40, duration_s=None)
    assert why is not None and "the pass cache could not be used" in why
    assert cache.lookup("pc3-x") is None


def test_a_pass_is_cached_under_the_pins_and_content_key_evidence_names(tmp_path: Path) -> None:
    """The pass cache and signed evidence once each took a gate's pins and content key
    themselves; both now take them from verify/subject.py, with the values they had."""
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    commit = fix_budget(repo)
    assert repo.failgate("check").code == 0
    verification = Verification(command=("python3", demo.CHECK_PATH), files=(demo.CHECK_PATH,))
    with GitRepo.open(repo.path) as git_repo:
        run = gate_run(
            git_repo, entity_key=KEY, verification=verification, commit=commit,
            pinned_from=None, ledger_dir="ledger", environment=None,
        )  # fmt: skip
        subject = gate_run(
            git_repo, entity_key=KEY, verification=verification, commit=commit,
            pinned_from=commit, ledger_dir="ledger", environment=None,
        ).subject()  # fmt: skip
        # the values as the primitives give them
        pinned = [(pin.path, pin.oid) for pin in resolve_pins(git_repo, commit, (demo.CHECK_PATH,))]
        content = content_key(git_repo, commit, "ledger")
        approved = TrustStore(git_repo.common_dir).approved(KEY)
        cache = Path(git_repo.common_dir) / "failgate" / "cache"
    assert run.pinned == tuple(pinned) and run.content == content
    assert run.pass_key(None) == pass_key(run.fingerprint, KEY, None, content)
    assert [entry.name for entry in cache.iterdir()] == [run.pass_key(None)]
    assert approved is not None and approved.fingerprint == run.fingerprint
    assert (subject.content, subject.verifier, subject.entity) == (
        content, f"vd6:{approved.fingerprint}", KEY,
    )  # fmt: skip


def test_evidence_signed_before_the_fixed_locale_stands_for_no_run(tmp_path: Path) -> None:
    """A vd4 statement names the same fingerprint, but its verifier may have run in a
    pusher's locale: it is another verifier digest, never a pass."""
    from failgate_hooks.core.evidence import Statement, parse_payload, payload, why_not_covered

    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    commit = fix_budget(repo)
    verification = Verification(command=("python3", demo.CHECK_PATH), files=(demo.CHECK_PATH,))
    with GitRepo.open(repo.path) as git_repo:
        subject = gate_run(
            git_repo, entity_key=KEY, verification=verification, commit=commit,
            pinned_from=None, ledger_dir="ledger", environment=None,
        ).subject()  # fmt: skip
    version, fingerprint = subject.verifier.split(":", 1)
    assert version == "vd6"
    statement = Statement(
        content=subject.content, environment=None, verifier=subject.verifier,
        entity=subject.entity, result="pass", time="2026-01-01T00:00:00Z",
        repository="r", ref=None, run_url=None, sandboxed=True, commit=commit,
        tree="0" * 40,
    )  # fmt: skip
    assert why_not_covered(statement, subject) is None  # the control
    # vd4: before the fixed locale; vd5: before the sandbox kept the pinned files read-only
    for former in ("vd4", "vd5"):
        old = parse_payload(payload(statement._replace(verifier=f"{former}:{fingerprint}")))
        assert "another verifier digest" in str(why_not_covered(old, subject))
