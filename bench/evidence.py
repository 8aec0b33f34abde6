"""The server deciding from signed evidence (issue 21): 20 gates, each cleared by a statement.

Two bare remotes hold the same 20 open gates, each with a pinned verifier, and
the same pushed commit. One names `evidence_signers` (so `require_evidence` is
on) and holds a statement per gate, made by a real `failgate attest --sandbox`;
the other names none, so the server reports open gates as warnings: the same
decision without evidence. Each case is a fresh `failgate-pre-receive` fed the
push's `<old> <new> <ref>` line in the remote, as git runs it.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from bench import build
from bench.harness import Bench, Case
from bench.report import met

GATES = 20
SIGNERS = ".failgate/signers"
BUDGET_S = 5.0  # GitHub Enterprise: every pre-receive hook of a push, together
_CONFIG = b'[tool.failgate]\nledger_refs = ["refs/remotes/origin/main"]\n'
_PRE_RECEIVE = "from failgate_hooks.commands.hooks import pre_receive_main; pre_receive_main()"


def _world(bench: Bench, root: Path, key: Path, public: str, *, signed: bool) -> build.World:
    work = build.init_repo(root / "work")
    remote = build.init_repo(root / "remote.git", bare=True)
    config = _CONFIG + (f'evidence_signers = "{SIGNERS}"\n'.encode() if signed else b"")
    files = {**build._source_files(config), SIGNERS: f"ci {public}\n".encode()}
    gates = [build.live_gate_event(key=f"bench:evidence:{n:02d}") for n in range(GATES)]
    commits = [build.Commit("the project", files), build.Commit("gates", build.event_files(gates))]
    build.fast_import(work, "main", commits)
    world = build._finish(work, remote, len(gates))
    build.git(work, "push", "-q", "--no-verify", "origin", f"{world.tip}:refs/heads/pushed")
    if signed:
        bench.run(
            [sys.executable, "-m", "failgate_hooks", "attest", "--sandbox", "--trust-ledger",
             "--key", str(key), "--ref", "refs/heads/main", "--ledger-rev", "origin/main"],
            work,
        )  # fmt: skip
        build.git(work, "push", "-q", "--no-verify", "origin", "refs/failgate/evidence")
    return world


def evidence_cases(bench: Bench, root: Path) -> list[Case]:
    """The two timed cases: the server with evidence, and without."""
    root.mkdir(parents=True)
    key = root / "ci-key"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ci", "-f", str(key)], check=True
    )
    public = " ".join(Path(f"{key}.pub").read_text().split()[:2])
    cases = []
    for name, signed in (("evidence", True), ("no evidence", False)):
        world = _world(bench, root / name.replace(" ", "-"), key, public, signed=signed)
        assert world.remote is not None
        line = f"{world.base} {world.tip} refs/heads/main"
        hook = f"echo '{line}' | {sys.executable} -c '{_PRE_RECEIVE}'"
        cases.append(Case(f"pre-receive/{name}", ("sh", "-c", hook), world.remote))
    # The decision itself, checked once: evidence clears every gate, none warns.
    said = bench.run(["sh", "-c", f"{cases[0].argv[2]} 2>&1"], cases[0].cwd)
    if said.count("cleared by evidence") != GATES:
        raise SystemExit(f"bench: the server did not clear {GATES} gates by evidence:\n{said}")
    return cases


def evidence_section(medians: dict[str, float]) -> list[str]:
    """The report's lines for the server deciding from evidence."""
    with_evidence, without = medians["pre-receive/evidence"], medians["pre-receive/no evidence"]
    share = with_evidence / BUDGET_S * 100
    return [
        "",
        "## The server deciding from signed evidence",
        "",
        f"`failgate-pre-receive` with `require_evidence`, {GATES} open gates each cleared by a",
        "signed statement (one `ssh-keygen -Y verify` each, one `-Y find-principals` per key),",
        "against the same push to a server without evidence (the gates only warn there).",
        "",
        "| case | median | |",
        "|---|---:|---|",
        f"| {GATES} gates cleared by evidence | {with_evidence * 1000:.0f} ms | |",
        f"| the same decision without evidence | {without * 1000:.0f} ms | |",
        f"| ratio | {with_evidence / without:.2f} × | |",
        f"| against GitHub Enterprise's {BUDGET_S:.0f} s for all pre-receive hooks | "
        f"{share:.0f} % of it | {met(with_evidence < BUDGET_S)} |",
    ]


__all__: Sequence[str] = ["evidence_cases", "evidence_section"]
