"""The trust store on real files, with real concurrent writers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from failgate_hooks.core.errors import TrustError
from failgate_hooks.core.events import Verification, Workdir
from failgate_hooks.verify import lockfile, trust
from failgate_hooks.verify.trust import TrustedVerifier, TrustStore, fingerprint, run_settings

ARGV = ("python", "checks/check.py")
PINS = [("checks/check.py", "a" * 40), ("checks/lib.py", "b" * 40)]


def ran(argv: tuple[str, ...], **settings: object) -> Verification:
    return Verification(command=argv, **settings)  # type: ignore[arg-type]


def test_fingerprint_is_order_free_for_pins_and_sensitive_to_everything_else() -> None:
    plain = run_settings(ran(ARGV))
    fp = fingerprint(ARGV, PINS, (), plain)
    assert len(fp) == 64
    assert fingerprint(ARGV, list(reversed(PINS)), (), plain) == fp
    assert fingerprint(("python", "checks/other.py"), PINS, (), plain) != fp
    assert fingerprint(ARGV, [PINS[0], ("checks/lib.py", "c" * 40)], (), plain) != fp
    assert fingerprint(ARGV, PINS[:1], (), plain) != fp
    # argv boundaries matter: two words are not one word with a space.
    assert fingerprint(("a b",), [], (), plain) != fingerprint(("a", "b"), [], (), plain)


def test_fingerprint_covers_every_run_setting() -> None:
    """What the verifier sees and what its pass stands on are part of what was reviewed:
    a pulled event that widens env_pass or narrows inputs is another verifier."""
    fp = fingerprint(ARGV, PINS, (), run_settings(ran(ARGV)))
    changed = [
        ran(ARGV, env_pass=("AWS_SECRET_ACCESS_KEY",)),
        ran(ARGV, inputs=("src/**",)),
        ran(ARGV, inputs=()),
        ran(ARGV, timeout_s=5),
        ran(ARGV, workdir=Workdir.INPLACE),
    ]
    others = {fingerprint(ARGV, PINS, (), run_settings(v)) for v in changed}
    assert len(others) == len(changed) and fp not in others
    # every field of a verification is covered: argv and files otherwise, the rest here
    fields = set(Verification._fields) - {"command", "files"}
    assert set(run_settings(ran(ARGV))) == fields == set(trust.SETTING_NAMES)
    # env_pass and inputs are sets: their order is not a new verifier
    assert run_settings(ran(ARGV, inputs=("b", "a"))) == run_settings(ran(ARGV, inputs=("a", "b")))
    assert run_settings(ran(ARGV, env_pass=("A", "B"))) == run_settings(
        ran(ARGV, env_pass=("B", "A"))
    )


def test_an_approval_is_seen_by_a_fresh_store(tmp_path: Path) -> None:
    store = TrustStore(str(tmp_path))
    entry = TrustedVerifier.new("deploy:gas", ran(ARGV), PINS, "Ada <ada@example.org>")
    assert not store.is_trusted("deploy:gas", entry.fingerprint)
    store.approve([entry])
    fresh = TrustStore(str(tmp_path))
    assert fresh.is_trusted("deploy:gas", entry.fingerprint)
    assert fresh.entries() == [entry]
    on_disk = json.loads((tmp_path / "failgate/trust.json").read_text())
    assert on_disk["format"] == 2
    assert on_disk["verifiers"][0]["approved_by"] == "Ada <ada@example.org>"
    assert not list((tmp_path / "failgate").glob("*.tmp"))
    assert not (tmp_path / "failgate/trust.json.lock").exists()


def test_trust_is_for_one_gate(tmp_path: Path) -> None:
    """The same verifier approved for one gate does not run for another: each gate's
    version is revoked on its own, and one gate's approval must not keep it alive."""
    store = TrustStore(str(tmp_path))
    entry = TrustedVerifier.new("deploy:gas", ran(ARGV), PINS, "Ada")
    store.approve([entry])
    assert not TrustStore(str(tmp_path)).is_trusted("deploy:other", entry.fingerprint)


def test_approving_a_new_version_revokes_the_old_and_going_back_is_a_downgrade(
    tmp_path: Path,
) -> None:
    store = TrustStore(str(tmp_path))
    old = TrustedVerifier.new("deploy:gas", ran(ARGV), PINS, "Ada", "2026-01-01T00:00:00Z")
    new = TrustedVerifier.new(
        "deploy:gas", ran((*ARGV, "--strict")), PINS, "Bo", "2026-02-01T00:00:00Z"
    )
    other = TrustedVerifier.new("deploy:other", ran(("true",)), [], "Cy")
    store.approve([old])
    store.approve([new, other])
    fresh = TrustStore(str(tmp_path))
    assert fresh.approved("deploy:gas") == new._replace(replaced=(old.fingerprint,))
    assert not fresh.is_trusted("deploy:gas", old.fingerprint)
    assert fresh.was_replaced("deploy:gas", old.fingerprint)
    assert not fresh.was_replaced("deploy:gas", new.fingerprint)
    assert fresh.approved("deploy:none") is None
    assert len(fresh.entries()) == 2
    # approving the old one again, knowingly, makes it the version and the new one replaced
    fresh.approve([old])
    again = TrustStore(str(tmp_path)).approved("deploy:gas")
    assert again is not None and again.fingerprint == old.fingerprint
    assert again.replaced == (new.fingerprint,)


def test_approving_the_approved_version_again_changes_nothing(tmp_path: Path) -> None:
    store = TrustStore(str(tmp_path))
    first = TrustedVerifier.new("deploy:gas", ran(ARGV), PINS, "Ada", "2026-01-01T00:00:00Z")
    store.approve([first])
    store.approve([TrustedVerifier.new("deploy:gas", ran(ARGV), PINS, "Bo")])
    assert TrustStore(str(tmp_path)).entries() == [first]


def test_a_store_of_format_1_keeps_each_gates_last_approval(tmp_path: Path) -> None:
    """Format 1 kept every approval ever given; reading it must not keep them all."""
    old = TrustedVerifier.new("deploy:gas", ran(ARGV), PINS, "Ada", "2026-01-01T00:00:00Z")
    new = TrustedVerifier.new(
        "deploy:gas", ran((*ARGV, "--strict")), PINS, "Bo", "2026-02-01T00:00:00Z"
    )
    legacy = [{k: v for k, v in e.to_json().items() if k != "replaced"} for e in (old, new)]
    path = tmp_path / "failgate/trust.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"format": 1, "verifiers": legacy}))
    store = TrustStore(str(tmp_path))
    assert store.approved("deploy:gas") == new._replace(replaced=(old.fingerprint,))
    assert store.was_replaced("deploy:gas", old.fingerprint)
    store.approve([TrustedVerifier.new("deploy:other", ran(("true",)), [], "Cy")])
    assert json.loads(path.read_text())["format"] == 2


def test_concurrent_approvals_lose_nothing(tmp_path: Path) -> None:
    writer = textwrap.dedent(
        """\
        import sys
        from failgate_hooks.core.events import Verification
        from failgate_hooks.verify.trust import TrustStore, TrustedVerifier
        store = TrustStore(sys.argv[1])
        ran = Verification(command=("true",))
        for i in range(5):
            store.approve([TrustedVerifier.new(f"e:w{sys.argv[2]}-{i}", ran, [], "t")])
        """
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", writer, str(tmp_path), str(n)]) for n in range(8)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0] * 8
    keys = {e.entity_key for e in TrustStore(str(tmp_path)).entries()}
    assert keys == {f"e:w{n}-{i}" for n in range(8) for i in range(5)}


def test_a_corrupt_store_says_where_and_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "failgate/trust.json"
    path.parent.mkdir()
    path.write_text("{not json")
    with pytest.raises(TrustError) as caught:
        TrustStore(str(tmp_path)).is_trusted("e:x", "0" * 64)
    assert str(path) in caught.value.message
    assert "corrupt" in caught.value.message
    assert caught.value.hint is not None and "failgate trust" in caught.value.hint
    path.write_text('{"format": 1, "verifiers": [{"argv": "x"}]}')
    with pytest.raises(TrustError, match=r"verifiers\[0\]"):
        TrustStore(str(tmp_path)).entries()
    twice = TrustedVerifier.new("e:x", ran(("true",)), [], "t").to_json()
    path.write_text(json.dumps({"format": 2, "verifiers": [twice, twice]}))
    with pytest.raises(TrustError, match=r"verifiers\[1\] is a second approval for e:x"):
        TrustStore(str(tmp_path)).entries()
    path.write_text('{"format": 1, "verifiers": [{"argv": "x"}]}')
    with pytest.raises(TrustError):  # approving never overwrites what it cannot read
        TrustStore(str(tmp_path)).approve([TrustedVerifier.new("e:x", ran(("true",)), [], "t")])
    assert "argv" in path.read_text()


def test_a_lock_left_by_a_dead_process_is_broken(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    lock = tmp_path / "failgate/trust.json.lock"
    lock.parent.mkdir()
    lock.write_text(f"{dead.pid} {os.uname().nodename} deadbeef\n")
    started = time.monotonic()
    TrustStore(str(tmp_path)).approve([TrustedVerifier.new("e:x", ran(("true",)), [], "t")])
    assert time.monotonic() - started < 2
    assert not lock.exists()
    assert not list(lock.parent.glob("*.stale-*"))


def test_a_live_lock_is_waited_for_then_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lockfile, "LOCK_WAIT_S", 0.3)
    lock = tmp_path / "failgate/trust.json.lock"
    lock.parent.mkdir()
    lock.write_text(f"{os.getpid()} {os.uname().nodename} cafe\n")
    with pytest.raises(TrustError, match="locked by") as caught:
        TrustStore(str(tmp_path)).approve([TrustedVerifier.new("e:x", ran(("true",)), [], "t")])
    assert caught.value.hint is not None and "remove" in caught.value.hint
    assert lock.exists()  # someone else's lock is never removed


def test_an_old_lock_is_stale_whoever_holds_it(tmp_path: Path) -> None:
    lock = tmp_path / "failgate/trust.json.lock"
    lock.parent.mkdir()
    lock.write_text(f"{os.getpid()} another-host cafe\n")
    old = time.time() - lockfile.LOCK_STALE_S - 5
    os.utime(lock, (old, old))
    TrustStore(str(tmp_path)).approve([TrustedVerifier.new("e:x", ran(("true",)), [], "t")])
    assert TrustStore(str(tmp_path)).entries()[0].entity_key == "e:x"


def test_an_approval_from_before_run_settings_counted_trusts_no_version(tmp_path: Path) -> None:
    """An fp1 approval covered argv and pins alone: after the upgrade it matches nothing, so
    failgate asks again rather than run a verifier whose settings nobody reviewed."""
    entry = TrustedVerifier.new("deploy:gas", ran(ARGV), PINS, "Ada").to_json()
    del entry["settings"]
    entry["fingerprint"] = trust.hashlib.sha256(
        trust.canonical_json(["fp1", list(ARGV), trust.pins_json(PINS)])
    ).hexdigest()
    path = tmp_path / "failgate/trust.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"format": 2, "verifiers": [entry]}))
    store = TrustStore(str(tmp_path))
    approved = store.approved("deploy:gas")
    assert approved is not None and approved.settings is None
    now = fingerprint(ARGV, PINS, (), run_settings(ran(ARGV)))
    assert not store.is_trusted("deploy:gas", now)


def test_fingerprint_tells_a_folder_pinned_whole_from_a_list_of_its_files(
    tmp_path: Path,
) -> None:
    """`files = ["lib"]` removes what the commit adds in lib/ before the run, `["lib/mod.py"]`
    keeps it: the same pinned blobs, another verifier. An fp2 approval, which named both
    alike, trusts neither now; the order of the list is no other verifier."""
    pins = [("lib/mod.py", "a" * 40)]
    whole = TrustedVerifier.new("e:x", ran(ARGV, files=("lib",)), pins, "Ada")
    listed = TrustedVerifier.new("e:x", ran(ARGV, files=("lib/mod.py",)), pins, "Ada")
    assert whole.fingerprint != listed.fingerprint
    both = [ran(ARGV, files=order) for order in [("lib", "tools"), ("tools", "lib")]]
    assert len({trust.verifier_fingerprint(v, pins) for v in both}) == 1
    fp2 = trust.hashlib.sha256(
        trust.canonical_json(["fp2", list(ARGV), trust.pins_json(pins), run_settings(ran(ARGV))])
    ).hexdigest()
    old = whole._replace(fingerprint=fp2).to_json()
    path = tmp_path / "failgate/trust.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"format": 2, "verifiers": [old]}))
    store = TrustStore(str(tmp_path))
    assert not store.is_trusted("e:x", whole.fingerprint)
    assert not store.is_trusted("e:x", listed.fingerprint)
