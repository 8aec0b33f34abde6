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
import datetime as dt
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# Run as a script, Python puts bench/ first on the path, where `bench` would name this
# file: the repository root goes first instead, so that `bench` is the package.
sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != HERE)]

from bench import build  # noqa: E402

PY = sys.executable
FLOOR = (PY, "-c", "import click, git")
CHECK = (PY, "-m", "failgate_hooks", "check", "--trigger", "push", "--ref", "refs/heads/main")
PUSH = ("git", "push", "-q", "origin", "main")
REPORT = ROOT / "docs" / "performance.md"
SLOW_S = 30.0  # a case slower than this runs once (see Bench.rounds)
# What a fresh clone lacks under <git-common-dir>/failgate/: what the ledger read
# keeps between runs (not passes, not trust).
LEDGER_CACHES: tuple[str, ...] = ()

# The targets: (what, limit), each a ratio of two medians of this run.
FIXED = 1.3  # check at 0 events ÷ floor
GROWTH = {1_000: 1.3, 10_000: 3.0}  # check at N events ÷ check at 0, warm, in both worlds
FIRST_RUN = 15.0  # check at 10,000 events, first run after a clone ÷ floor
PUSH_ADDS = 1.5  # what the hook adds to a push ÷ floor


def _nothing() -> None:
    pass


# ---------------------------------------------------------------------------- running


@dataclass
class Case:
    """One timed command, and what to do before each run of it (untimed)."""

    key: str
    argv: Sequence[str]
    cwd: Path
    before: Callable[[], None] = _nothing


@dataclass
class Bench:
    """The temporary folder, the environment every command runs in, and notes for the report."""

    root: Path
    env: dict[str, str]
    notes: list[str] = field(default_factory=list)

    def run(self, argv: Sequence[str], cwd: Path, *, ok: Sequence[int] = (0,), **env: str) -> str:
        """Run a command and return its standard output; stop the bench when it fails."""
        proc = subprocess.run(
            list(argv), cwd=cwd, env={**self.env, **env}, capture_output=True, check=False
        )
        if proc.returncode not in ok:
            output = (proc.stdout + proc.stderr).decode("utf-8", "replace")
            raise SystemExit(f"bench: {shlex.join(argv)} exited {proc.returncode}:\n{output}")
        return proc.stdout.decode("utf-8", "replace")

    def rounds(self, cases: Sequence[Case], runs: int) -> dict[str, float]:
        """Median seconds of each case over `runs` rounds, after one warm-up round.

        A case whose warm-up takes longer than SLOW_S runs no more: its warm-up is
        its one figure, and the notes say so. The bench stays within minutes even
        where a change has made something pathologically slow."""
        times: dict[str, list[float]] = {case.key: [] for case in cases}
        slow: dict[str, float] = {}
        for number in range(runs + 1):
            started = time.perf_counter()
            for case in cases:
                if case.key in slow:
                    continue
                case.before()
                start = time.perf_counter()
                self.run(case.argv, case.cwd)
                took = time.perf_counter() - start
                if number:
                    times[case.key].append(took)
                elif took > SLOW_S:
                    slow[case.key] = took
            label = f"round {number}/{runs}" if number else "warm-up round"
            print(f"  {label}: {time.perf_counter() - started:.1f} s", flush=True)
        for key, took in slow.items():
            times[key] = [took]
            self.notes.append(f"{key}: one run only, its warm-up took {took:.0f} s")
        return {key: statistics.median(values) for key, values in times.items()}


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


@dataclass
class Prepared:
    """A built world with the facts measured while setting it up."""

    name: str
    world: build.World
    hook_git: Counter[str] = field(default_factory=Counter)
    check_git: Counter[str] = field(default_factory=Counter)
    verifiers_on_warm_check: int = 0


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


@dataclass
class Monorepo:
    """The monorepo's verifier work, measured once each (they change what is cached)."""

    prepared: Prepared
    files: int
    gates: int
    steps: list[tuple[str, int, float]] = field(default_factory=list)  # what, ran, seconds


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
        ledger = read_union(repo, revisions, config.ledger)
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


# ---------------------------------------------------------------------------- the report


def machine() -> str:
    def out(*argv: str) -> str:
        found = shutil.which(argv[0])
        if found is None:
            return "?"
        return subprocess.run([found, *argv[1:]], capture_output=True, text=True).stdout.strip()

    return (
        f"{platform.system()} {platform.machine()}, `nproc` = {out('nproc')}, "
        f"Python {platform.python_version()}, {out('git', '--version')}"
    )


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


def met(ok: bool) -> str:
    return "met" if ok else "**not met**"


@dataclass
class Results:
    command: str
    runs: int
    checkout_dir: str
    medians: dict[str, float]
    upstream: list[Prepared]  # by number of events, growing from 0
    no_remote: list[Prepared]
    mono: Monorepo | None
    phases: dict[str, dict[str, float]]
    notes: list[str]


def report(r: Results) -> str:
    t = r.medians
    floor = t["floor"]
    zero, big = r.upstream[0], r.upstream[-1]
    lines = [
        "# Performance",
        "",
        "What `failgate check` and the hook cost, and how that grows with the ledger. This",
        "file is the output of `make bench`: one run on one machine, so its ratios compare",
        "like with like. Regenerate it there.",
        "",
        f"- command: `{r.command}`",
        f"- machine: {machine()}",
        f"- date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        f"- method: each figure is the median of {r.runs} rounds after a warm-up round; each",
        "  round runs every case once, so a change of load during the run hits every case",
        "  alike. Every `check` and every hook is a fresh process. Git runs with",
        "  `GIT_CONFIG_GLOBAL=/dev/null` and `GIT_CONFIG_NOSYSTEM=1`; Python's bytecode cache",
        "  is on, as in any installed hook. *Protected upstream*: a bare remote holds the",
        "  ledger, `refs/remotes/origin/HEAD` is set and `ledger_refs` names",
        "  `refs/remotes/origin/main`; the checked commit is one code change ahead of it.",
        "  *No remote*: the same ledger, nothing protected. *Warm*: the run before left",
        "  whatever failgate keeps between runs. *First run after a clone*: the ledger cache",
        "  is removed before each run. The live gate's pass stays cached: no verifier runs",
        "  in a timed case.",
        # the kind of folder, never its name: a path of the bench machine says nothing
        "- verifier checkouts go to "
        + ("a tmpfs folder." if r.checkout_dir.endswith("(tmpfs)") else "the bench's folder."),
        f'- the floor, `python -c "import click, git"`: {ms(floor)}.',
        "",
        "## Targets",
        "",
        "| target | measured | limit | |",
        "|---|---:|---:|---|",
    ]

    def ratio(name: str, value: float, limit: float) -> None:
        lines.append(f"| {name} | {value:.2f} × | ≤ {limit} × | {met(value <= limit)} |")

    ratio(f"fixed cost: `check` at {zero.name} ÷ floor", t[f"{zero.name}/check"] / floor, FIXED)
    for label, worlds in (("protected upstream", r.upstream), ("no remote", r.no_remote)):
        base = worlds[0]
        for p in worlds[1:]:
            limit = GROWTH.get(p.world.events)
            if limit is not None:
                value = t[f"{p.name}/check"] / t[f"{base.name}/check"]
                ratio(
                    f"warm growth, {label}: `check` at {p.world.events:,} events ÷ at 0",
                    value,
                    limit,
                )
    ratio(
        f"first run after a clone: `check` at {big.world.events:,} events ÷ floor",
        t[f"{big.name}/check first"] / floor,
        FIRST_RUN,
    )
    pushed = [*r.upstream, *([r.mono.prepared] if r.mono else [])]
    for p in pushed:
        added = t[f"{p.name}/push hook"] - t[f"{p.name}/push plain"]
        ratio(f"the push, {short(p)}: what the hook adds ÷ floor", added / floor, PUSH_ADDS)
    counts = {short(p): sum(p.hook_git.values()) for p in pushed}
    same = len({n for name, n in counts.items() if name != short(zero)}) == 1
    lines.append(
        "| git processes the hook starts per push, whatever the number of events | "
        + ", ".join(f"{n} ({name})" for name, n in counts.items())
        + f" | the same | {met(same)} |"
    )
    everything = [*r.upstream, *r.no_remote, *([r.mono.prepared] if r.mono else [])]
    warm_runs = {p.name: p.verifiers_on_warm_check for p in everything}
    lines.append(
        "| content already verified runs no verifier (second `check` of each world) | "
        + ", ".join(f"{n} ({name})" for name, n in warm_runs.items())
        + f" | 0 | {met(not any(warm_runs.values()))} |"
    )
    if r.mono is not None:
        outside = r.mono.steps[2][1]
        lines.append(
            f"| a commit touching none of a gate's `inputs` runs none (monorepo) | {outside} "
            f"| 0 | {met(outside == 0)} |"
        )

    lines += [
        "",
        "## Medians",
        "",
        "| repository | `check` | ÷ floor | `check`, first run | push `--no-verify` "
        "| push + hook | what the hook adds |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]

    def cell(key: str) -> str:
        return ms(t[key]) if key in t else "–"

    for p in everything:
        n = p.name
        hook_adds = "–"
        if f"{n}/push hook" in t:
            hook_adds = ms(t[f"{n}/push hook"] - t[f"{n}/push plain"])
        lines.append(
            f"| {n} | {cell(f'{n}/check')} | {t[f'{n}/check'] / floor:.2f} × "
            f"| {cell(f'{n}/check first')} | {cell(f'{n}/push plain')} "
            f"| {cell(f'{n}/push hook')} | {hook_adds} |"
        )

    lines += [
        "",
        f"Where a `check` at {big.world.events:,} events (protected upstream) spends its time,",
        "in-process (medians; *assess* is the whole decision less the union and the resolving):",
        "",
        "| phase | warm | first run |",
        "|---|---:|---:|",
    ]
    what = {
        "import": "importing evaluate, gates, union, git (after click and git)",
        "union": "the ledger union: list each revision's ledger, read and parse the events",
        "resolve": "resolving every entity",
        "assess": "assessing every entity and deciding",
    }
    for key, label in what.items():
        lines.append(
            f"| {label} | {ms(r.phases['warm'][key])} | {ms(r.phases['first run'][key])} |"
        )
    lines += [
        "",
        "Git processes the hook starts on one push (trace2: with the hook − without):",
        "",
    ]
    lines += [f"- {p.name}: {sum(p.hook_git.values())}: {describe(p.hook_git)}" for p in pushed]
    lines += ["", "Git processes one `check` starts:", ""]
    lines += [
        f"- {p.name}: {sum(p.check_git.values())}: {describe(p.check_git)}" for p in everything
    ]
    if r.mono is not None:
        lines += [
            "",
            f"## Monorepo: {r.mono.files:,} files, {r.mono.gates} gates with `inputs`",
            "",
            "Each gate's `inputs` is its own service folder. Measured once each, in this order:",
            "",
            "| step | verifiers run | wall time |",
            "|---|---:|---:|",
        ]
        lines += [f"| {what} | {ran} | {ms(took)} |" for what, ran, took in r.mono.steps]
    lines += ["", "## Notes", ""] + [f"- {note}" for note in r.notes]
    return "\n".join(lines) + "\n"


def short(prepared: Prepared) -> str:
    return prepared.name.removesuffix(", protected upstream")


def describe(counts: Counter[str]) -> str:
    return ", ".join(f"{name} ×{n}" if n > 1 else name for name, n in sorted(counts.items()))


# ---------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/bench.py", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed rounds (medians)")
    parser.add_argument(
        "--events", type=int, nargs="+", default=[0, 1000, 10_000], help="ledger sizes"
    )
    parser.add_argument("--files", type=int, default=50_000, help="monorepo files; 0 skips it")
    parser.add_argument("--gates", type=int, default=20, help="monorepo gates")
    parser.add_argument("--out", default=str(REPORT), help="report file; '-' writes none")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
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

        print("timing", flush=True)
        cases = [Case("floor", FLOOR, ROOT)]
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
    text = report(results)
    print()
    print(text)
    if args.out != "-":
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
