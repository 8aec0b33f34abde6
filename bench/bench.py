"""`make bench`: the issue's targets for `failgate check` and the hook, measured in one run.

Builds its repositories in a temporary folder (bench/build.py), then times, all
in one run so that the ratios compare like with like:

- the floor: `python -c "import click, git"`, the least a Python hook costs;
- `failgate check` in a fresh process with 0, 1,000 and 10,000 events, warm,
  in a repository with a protected upstream (a bare remote, its main read
  through `ledger_refs`, `refs/remotes/origin/HEAD` set) and in one with no
  remote at all;
- `check` at 10,000 events on the first run after a clone: the ledger cache
  removed before each run;
- a real `git push` to the bare remote through the plain hook, and the same
  push with `--no-verify`;
- in a monorepo with gates that set `inputs`: how many verifiers run for
  content already verified and for a commit outside every gate's inputs.

Every timed case runs once per round, rounds after a warm-up round, and each
figure is the median over the rounds: a machine whose load drifts during the
run slows every case alike, so the ratios hold. It prints the tables and
writes them to docs/performance.md with the command and the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# Run as a script, Python puts bench/ first on the path, where `bench` would name this
# file: the repository root goes first instead, so that `bench` is the package.
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != HERE)]

from bench import build  # noqa: E402
from bench.evidence import evidence_cases, evidence_section  # noqa: E402
from bench.harness import Bench, Case  # noqa: E402
from bench.report import Monorepo, Prepared, Results, report  # noqa: E402
from failgate_hooks.ledger.parsecache import FILE_NAME  # noqa: E402

PY = sys.executable
FLOOR = (PY, "-c", "import click, git")
CHECK = (PY, "-m", "failgate_hooks", "check", "--trigger", "push", "--ref", "refs/heads/main")
PUSH = ("git", "push", "-q", "origin", "main")
REPORT = ROOT / "docs" / "performance.md"
# What a fresh clone lacks under <git-common-dir>/failgate/: what the ledger read
# keeps between runs (not passes, not trust).
LEDGER_CACHES = (FILE_NAME,)


def bench_env(root: Path) -> tuple[dict[str, str], str]:
    """The environment of every command, and where verifiers' checkouts go."""
    env = build.isolated_env()
    # Some shells set PYTHONDONTWRITEBYTECODE: every run would then compile failgate
    # from source, which no installed hook does. A private folder keeps the tree clean.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
    # Verifier checkouts write the whole tree: on a slow disk 50,000 files take
    # minutes, so they go to memory when the machine has a tmpfs (the report says so).
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        checkouts = tempfile.mkdtemp(prefix="failgate-bench-", dir=shm)
        env["TMPDIR"] = checkouts
        return env, f"{checkouts} (tmpfs)"
    return env, tempfile.gettempdir()


def git_starts(bench: Bench, argv: Sequence[str], cwd: Path) -> tuple[str, Counter[str]]:
    """A command's output, and the git processes it starts by subcommand (git's trace2)."""
    trace = bench.root / f"trace-{time.monotonic_ns()}.json"
    output = bench.run(argv, cwd, GIT_TRACE2_EVENT=str(trace))
    counts: Counter[str] = Counter()
    for line in trace.read_text().splitlines():
        event = json.loads(line)
        if event.get("event") == "start":
            counts[subcommand(event["argv"])] += 1
    trace.unlink()
    return output, counts


def subcommand(argv: Sequence[str]) -> str:
    """`git -c k=v log …` -> `log`; a program that is not git -> its name."""
    words = list(argv[1:])
    while words[:1] == ["-c"]:
        words = words[2:]
    words = [w for w in words if not w.startswith("-")]
    return words[0] if words else os.path.basename(argv[0])


def verifiers_ran(output: str) -> int:
    """How many gates of a `check --json` ran their verifier rather than find a cached pass."""
    gates = json.loads(output)["gates"]
    return sum(1 for g in gates if g["verifier"] is not None and not g["verifier"]["cached"])


# ---------------------------------------------------------------------------- the worlds


def clear_ledger_caches(world: build.World) -> None:
    for name in LEDGER_CACHES:
        path = world.work / ".git" / "failgate" / name
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        elif path.exists():
            path.unlink()


def reset_remote(world: build.World) -> None:
    """Put the remote's main, and our tracking ref of it, back: every push is the same push."""
    assert world.remote is not None
    build.git(world.remote, "update-ref", "refs/heads/main", world.base)
    build.git(world.work, "update-ref", "refs/remotes/origin/main", world.base)


def prepare(bench: Bench, name: str, world: build.World) -> Prepared:
    """Trust the verifiers, run them once, count git processes; with a remote, the hook's too."""
    work = world.work
    bench.run([PY, "-m", "failgate_hooks", "trust", "--all", "--yes"], work)
    first = json.loads(bench.run([*CHECK, "--json"], work))
    if first["decision"] != "allowed" or (world.events and not first["gates"]):
        raise SystemExit(f"bench: {name}: expected every gate to clear, got {first['decision']}")
    prepared = Prepared(name, world)
    second, prepared.check_git = git_starts(bench, [*CHECK, "--json"], work)
    prepared.verifiers_on_warm_check = verifiers_ran(second)
    if world.remote is None:
        return prepared
    bench.run([PY, "-m", "failgate_hooks", "install"], work)
    reset_remote(world)
    _, with_hook = git_starts(bench, PUSH, work)
    reset_remote(world)
    _, without = git_starts(bench, [*PUSH, "--no-verify"], work)
    reset_remote(world)
    prepared.hook_git = with_hook - without
    return prepared


def monorepo_work(bench: Bench, world: build.World, files: int, gates: int) -> Monorepo:
    """Verifier runs for new content, the same content, and commits outside or inside inputs."""
    work = world.work
    bench.run([PY, "-m", "failgate_hooks", "trust", "--all", "--yes"], work)
    mono = Monorepo(Prepared("monorepo", world), files, gates)

    def step(what: str) -> None:
        start = time.perf_counter()
        out = bench.run([*CHECK, "--json"], work)
        took = time.perf_counter() - start
        if json.loads(out)["decision"] != "allowed":
            raise SystemExit(f"bench: monorepo: {what}: the gates did not clear")
        mono.steps.append((what, verifiers_ran(out), took))
        print(f"  {what}: {mono.steps[-1][1]} verifier(s) ran, {took:.1f} s", flush=True)

    day = build.EPOCH + 2 * 86_400
    step("`check`, first time: no pass cached")
    step("`check` again, the same content")
    build.commit_change(world, "README.md", "A monorepo, documented.\n", "docs", day)
    step("`check` of a commit outside every gate's `inputs` (README.md)")
    build.commit_change(world, "services/svc-03/pkg/m00/new.py", "NEW = 1\n", "svc-03", day + 60)
    step("`check` of a commit inside one gate's `inputs` (services/svc-03/)")
    world.tip = build.git(work, "rev-parse", "main")
    mono.prepared = prepare(bench, "monorepo", world)
    return mono


# ---------------------------------------------------------------------------- phases

_PHASES_SCRIPT = """\
import json, sys, time
start = time.perf_counter()
from failgate_hooks.app.evaluate import Evaluator, Request
from failgate_hooks.core.gates import Context
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger.union import Revision, config_at, read_union
imported = time.perf_counter()
with GitRepo.open(".") as repo:
    tip = repo.resolve_commit("HEAD")
    base = repo.resolve_commit("refs/remotes/origin/main")
    config = config_at(repo, base, "origin/main")
    revisions = (Revision("HEAD", tip), Revision("origin/main", base, protected=True))
    t0 = time.perf_counter()
    if sys.argv[1] == "union":
        ledger = read_union(repo, revisions, config.ledger, config.max_event_bytes)
        t1 = time.perf_counter()
        ledger.resolve_all()
        found = {"union": t1 - t0, "resolve": time.perf_counter() - t1}
    else:
        request = Request(tip, Context("push", "refs/heads/main"), revisions, run_verifiers=False)
        Evaluator(repo, config).evaluate(request)
        found = {"evaluate": time.perf_counter() - t0}
print(json.dumps({"import": imported - start, **found}))
"""


def phases(bench: Bench, world: build.World, runs: int) -> dict[str, dict[str, float]]:
    """Where one `check`'s time goes in-process, warm and first run (medians of `runs`)."""
    found: dict[str, dict[str, float]] = {}
    for state in ("warm", "first run"):
        samples: dict[str, list[float]] = {}
        for _ in range(runs):
            for part in ("union", "evaluate"):
                if state == "first run":
                    clear_ledger_caches(world)
                out = json.loads(bench.run([PY, "-c", _PHASES_SCRIPT, part], world.work))
                for name, seconds in out.items():
                    samples.setdefault(name, []).append(seconds)
        medians = {name: statistics.median(values) for name, values in samples.items()}
        medians["assess"] = max(0.0, medians["evaluate"] - medians["union"] - medians["resolve"])
        found[state] = medians
        clear_ledger_caches(world)
        bench.run(CHECK, world.work)  # warm again for whatever runs next
    return found


# ---------------------------------------------------------------------------- timing


def cases_for(prepared: Prepared, *, first_run: bool) -> list[Case]:
    """check warm (and on a first run), and, with a remote, push without and with the hook."""
    world, name = prepared.world, prepared.name
    cases = [Case(f"{name}/check", CHECK, world.work)]
    if first_run:
        cases.append(
            Case(f"{name}/check first", CHECK, world.work, lambda: clear_ledger_caches(world))
        )
    if world.remote is not None:
        cases += [
            Case(
                f"{name}/push plain",
                [*PUSH, "--no-verify"],
                world.work,
                lambda: reset_remote(world),
            ),
            Case(f"{name}/push hook", PUSH, world.work, lambda: reset_remote(world)),
        ]
    return cases


# ---------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/bench.py", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed rounds (medians)")
    parser.add_argument(
        "--events", type=int, nargs="+", default=[0, 1000, 10_000], help="ledger sizes"
    )
    parser.add_argument("--files", type=int, default=50_000, help="monorepo files; 0 skips it")
    parser.add_argument("--gates", type=int, default=20, help="monorepo gates")
    parser.add_argument(
        "--checkout-files", type=int, default=50_000, help="bench/checkouts.py's; 0 skips it"
    )
    parser.add_argument("--out", default=str(REPORT), help="report file; '-' writes none")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument(
        "--no-evidence", dest="evidence", action="store_false", help="skip the evidence cases"
    )
    args = parser.parse_args(argv)
    if args.events != sorted(set(args.events)) or args.events[0] != 0 or len(args.events) < 2:
        parser.error("--events: at least two sizes, growing from 0")

    given = list(sys.argv[1:] if argv is None else argv)
    command = shlex.join(["python", "bench/bench.py", *given]) if given else "make bench"
    started = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix="failgate-bench-"))
    env, checkout_dir = bench_env(root)
    bench = Bench(root, env)
    try:
        print("building and preparing", flush=True)
        upstream: list[Prepared] = []
        no_remote: list[Prepared] = []
        for events in args.events:
            start = time.perf_counter()
            for upstream_too, found in ((True, upstream), (False, no_remote)):
                kind = "protected upstream" if upstream_too else "no remote"
                world = build.ledger_world(
                    root / f"{events}-{'upstream' if upstream_too else 'alone'}",
                    events,
                    upstream=upstream_too,
                )
                found.append(prepare(bench, f"{events:,} events, {kind}", world))
            took = time.perf_counter() - start
            print(f"  {events:,} events: built and prepared in {took:.1f} s", flush=True)
        mono = None
        if args.files:
            start = time.perf_counter()
            world = build.monorepo_world(root / "monorepo", args.files, args.gates)
            print(f"  monorepo built in {time.perf_counter() - start:.1f} s", flush=True)
            mono = monorepo_work(bench, world, args.files, args.gates)

        evidence = evidence_cases(bench, root / "evidence") if args.evidence else []
        print("timing", flush=True)
        cases = [Case("floor", FLOOR, ROOT), *evidence]
        for prepared in upstream:
            cases += cases_for(prepared, first_run=prepared is upstream[-1])
        for prepared in no_remote:
            cases += cases_for(prepared, first_run=False)
        if mono is not None:
            cases += cases_for(mono.prepared, first_run=False)
        medians = bench.rounds(cases, args.runs)
        print("phases", flush=True)
        where = phases(bench, upstream[-1].world, max(3, args.runs // 2))
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
        if checkout_dir.endswith("(tmpfs)"):
            shutil.rmtree(env["TMPDIR"], ignore_errors=True)
    bench.notes.append(f"the whole run took {time.perf_counter() - started:.0f} s")
    results = Results(
        command, args.runs, checkout_dir, medians, upstream, no_remote, mono, where, bench.notes
    )
    text = report(results) + ("\n".join(evidence_section(medians)) + "\n" if evidence else "")
    print()
    print(text)
    if args.out != "-":
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"written to {args.out}")
    if args.checkout_files:  # verifier checkouts: a section of its own, after these tables
        from bench import checkouts

        checkouts.main(["--files", str(args.checkout_files), "--out", args.out])
    return 0


if __name__ == "__main__":
    sys.exit(main())
