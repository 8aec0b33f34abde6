"""`make bench`: how failgate's cost grows, what the hook adds to a push, and what it avoids.

Builds its repositories in a temporary folder (bench/build.py), then times, all
in one run so that the ratios compare like with like:

- the floor: `python -c "import click, git"`, the least a Python hook costs;
- `failgate check` in a fresh process, with 0, 1,000 and 10,000 events, warm
  (parse cache filled) and cold (parse cache cleared, as after a clone);
- a real `git push` to a bare remote through the plain hook, and the same push
  with `--no-verify`;
- in a 50,000-file monorepo with 20 gates that set `inputs`: how many
  verifiers run for content already verified and for a commit outside every
  gate's inputs, and what a clean checkout for a verifier costs.

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
# what `failgate check` imports before it decides anything
IMPORTS = (
    PY, "-c",
    "import click, git, failgate_hooks.commands.cli, failgate_hooks.app.check,"
    " failgate_hooks.render.text",
)  # fmt: skip
CHECK = (PY, "-m", "failgate_hooks", "check", "--trigger", "push", "--ref", "refs/heads/main")
PUSH = ("git", "push", "-q", "origin", "main")
REPORT = ROOT / "docs" / "performance.md"
SLOW_S = 30.0  # a case slower than this runs once (see Bench.rounds)


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
            words = [a for a in event["argv"][1:] if not a.startswith("-")]
            counts[words[0] if words else os.path.basename(event["argv"][0])] += 1
    trace.unlink()
    return output, counts


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


def caches(world: build.World) -> list[Path]:
    """What a fresh clone lacks: parsed events and ledger indexes (not passes, not trust)."""
    return [world.work / ".git" / "failgate" / name for name in ("parsed", "index")]


def clear_caches(world: build.World) -> None:
    for folder in caches(world):
        shutil.rmtree(folder, ignore_errors=True)


def reset_remote(world: build.World) -> None:
    """Put the remote's main, and our tracking ref of it, back: every push is the same push."""
    build.git(world.remote, "update-ref", "refs/heads/main", world.base)
    build.git(world.work, "update-ref", "refs/remotes/origin/main", world.base)


def prepare(bench: Bench, name: str, world: build.World) -> Prepared:
    """Trust the verifiers, run them once, install the hook, and count git processes."""
    work = world.work
    bench.run([PY, "-m", "failgate_hooks", "trust", "--all", "--yes"], work)
    first = json.loads(bench.run([*CHECK, "--json"], work))
    if first["decision"] != "allowed" or (world.events and not first["gates"]):
        raise SystemExit(f"bench: {name}: expected every gate to clear, got {first['decision']}")
    prepared = Prepared(name, world)
    second, prepared.check_git = git_starts(bench, [*CHECK, "--json"], work)
    prepared.verifiers_on_warm_check = verifiers_ran(second)
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
    checkouts: list[tuple[str, float]] = field(default_factory=list)


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

    for where, tmpdir, runs in (
        ("verifiers' temporary folder", bench.env.get("TMPDIR", tempfile.gettempdir()), 3),
        ("the disk (the bench's folder)", str(bench.root), 1),
    ):
        cold, warm = time_checkouts(bench, work, tmpdir, runs)
        mono.checkouts.append((f"cold, {where}: `read-tree` + `checkout-index`", cold))
        mono.checkouts.append((f"warm, {where}: index already read, `checkout-index`", warm))
        print(f"  checkout in {where}: cold {cold:.2f} s, warm {warm:.2f} s", flush=True)

    hook = prepare(bench, "monorepo", world)
    mono.prepared = hook
    return mono


_CHECKOUT_SCRIPT = """\
import json, statistics, sys, time
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.verify.checkout import Checkouts
cold, warm = [], []
with GitRepo.open(".") as repo:
    commit = repo.resolve_commit("HEAD")
    for _ in range(int(sys.argv[1])):
        with Checkouts(repo, parent_dir=sys.argv[2]) as checkouts:
            start = time.perf_counter()
            checkouts.fresh(commit)
            cold.append(time.perf_counter() - start)
            start = time.perf_counter()
            checkouts.fresh(commit)
            warm.append(time.perf_counter() - start)
print(json.dumps([statistics.median(cold), statistics.median(warm)]))
"""


def time_checkouts(bench: Bench, work: Path, parent: str, runs: int) -> tuple[float, float]:
    """The first clean checkout of a commit (index read, then written out), and a later one."""
    out = bench.run([PY, "-c", _CHECKOUT_SCRIPT, str(runs), parent], work)
    cold, warm = json.loads(out)
    return float(cold), float(warm)


_PHASES_SCRIPT = """\
import json, sys, time
start = time.perf_counter()
from failgate_hooks import ledgerindex
from failgate_hooks.app.evaluate import Evaluator, GitFacts, Request
from failgate_hooks.core.gates import Context, ruled_out
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger.union import Revision, config_at
imported = time.perf_counter()
with GitRepo.open(".") as repo:
    tip = repo.resolve_commit("HEAD")
    base = repo.resolve_commit("refs/remotes/origin/main")
    config = config_at(repo, base, "origin/main")
    revisions = (Revision("HEAD", tip), Revision("origin/main", base, protected=True))
    context = Context("push", "refs/heads/main")
    t0 = time.perf_counter()
    trees = {repo.tree_entry(r.commit, config.ledger).oid: r.commit for r in revisions}
    t1 = time.perf_counter()
    for tree, commit in trees.items():  # read from disk (warm), or built (cold)
        ledgerindex.tree_index(repo, commit, tree, config.ledger)
    t2 = time.perf_counter()
    facts = GitFacts(repo, tip, config.ledger)
    view = ledgerindex.ledger_view(
        repo, revisions, config.ledger, lambda scopes: ruled_out(scopes, facts, context)
    )
    t3 = time.perf_counter()
    request = Request(tip, context, revisions, run_verifiers=False)
    Evaluator(repo, config).evaluate(request)  # the view again, then assess and decide
    t4 = time.perf_counter()
view_s = t3 - t2
print(json.dumps({"import": imported - start, "trees": t1 - t0, "index": t2 - t1,
                  "view": view_s, "decide": max(0.0, t4 - t3 - view_s),
                  "full": len({f.entity_key for f in view.ledger.files.values()}),
                  "settled": len(view.settled.rows) if view.settled else 0}))
"""


def phases(bench: Bench, world: build.World, runs: int) -> dict[str, dict[str, float]]:
    """Where one `check`'s time goes in-process, warm and cold (medians of `runs`)."""
    found: dict[str, dict[str, float]] = {}
    for state in ("warm", "cold"):
        samples: dict[str, list[float]] = {}
        for _ in range(runs):
            if state == "cold":
                clear_caches(world)
            start = time.perf_counter()
            out = json.loads(bench.run([PY, "-c", _PHASES_SCRIPT], world.work))
            for name, seconds in out.items():
                samples.setdefault(name, []).append(seconds)
            if time.perf_counter() - start > SLOW_S:
                break  # one figure says enough of something that slow
        found[state] = {name: statistics.median(values) for name, values in samples.items()}
    return found


# ---------------------------------------------------------------------------- timing


def cases_for(prepared: Prepared, *, cold: bool) -> list[Case]:
    """check warm/cold, push without and with the hook (warm, cold) for one world."""
    world, name = prepared.world, prepared.name

    def reset() -> None:
        reset_remote(world)

    def reset_cold() -> None:
        reset_remote(world)
        clear_caches(world)

    cases = [Case(f"{name}/check", CHECK, world.work)]
    if cold:
        cases.append(Case(f"{name}/check cold", CHECK, world.work, lambda: clear_caches(world)))
    cases += [
        Case(f"{name}/push plain", [*PUSH, "--no-verify"], world.work, reset),
        Case(f"{name}/push hook", PUSH, world.work, reset),
    ]
    if cold:
        cases.append(Case(f"{name}/push hook cold", PUSH, world.work, reset_cold))
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
    ledgers: list[Prepared]
    mono: Monorepo | None
    phases: dict[str, dict[str, float]]
    notes: list[str]


def report(r: Results) -> str:
    t = r.medians
    floor = t["floor"]
    zero, big = r.ledgers[0], r.ledgers[-1]
    z, b = zero.name, big.name
    lines = [
        "# Performance",
        "",
        "What the hook costs on every push, how that grows with the ledger, and how much",
        "verifier work it avoids (issue 11). This file is the output of `make bench`: one",
        "run on one machine, so its ratios compare like with like. Regenerate it there.",
        "",
        f"- command: `{r.command}`",
        f"- machine: {machine()}",
        f"- date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        f"- method: each figure is the median of {r.runs} rounds after a warm-up round; each",
        "  round runs every case once, so a change of load during the run hits every case",
        "  alike. Every `check` and every hook is a fresh process. Git runs with",
        "  `GIT_CONFIG_GLOBAL=/dev/null` and `GIT_CONFIG_NOSYSTEM=1`; Python's bytecode cache",
        "  is on, as in any installed hook. *Warm*: the ledger index holds every ledger tree",
        "  (and the parse cache what was kept). *Cold*: both are cleared before each run",
        "  (`<git-common-dir>/failgate/parsed/` and `…/index/`), as on the first run after a",
        "  clone. The live gate's pass stays cached in both: no verifier runs in a timed case.",
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

    ratio(f"growth, warm: `check` at {b} ÷ `check` at {z}", t[f"{b}/check"] / t[f"{z}/check"], 1.5)
    ratio(
        f"growth, cold: `check` at {b}, caches cleared ÷ `check` at {z}",
        t[f"{b}/check cold"] / t[f"{z}/check"],
        4,
    )
    ratio(f"fixed cost: `check` at {z} ÷ floor", t[f"{z}/check"] / floor, 1.3)
    every = [*r.ledgers, *([r.mono.prepared] if r.mono else [])]
    for p in every:
        added = t[f"{p.name}/push hook"] - t[f"{p.name}/push plain"]
        ratio(f"the push, {p.name}: what the hook adds ÷ floor", added / floor, 1.5)
    counts = {p.name: sum(p.hook_git.values()) for p in every}
    same = len({n for name, n in counts.items() if name != z}) == 1
    lines.append(
        "| git processes the hook starts per push, whatever the number of events | "
        + ", ".join(f"{n} ({name})" for name, n in counts.items())
        + f" | the same | {met(same)} |"
    )
    warm_runs = {p.name: p.verifiers_on_warm_check for p in every}
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
        "| repository | `check` warm | `check` cold | push `--no-verify` | push + hook "
        "| push + hook, cold | what the hook adds |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]

    def cell(key: str) -> str:
        return ms(t[key]) if key in t else "–"

    for p in every:
        n = p.name
        added = t[f"{n}/push hook"] - t[f"{n}/push plain"]
        lines.append(
            f"| {n} | {cell(f'{n}/check')} | {cell(f'{n}/check cold')} "
            f"| {cell(f'{n}/push plain')} | {cell(f'{n}/push hook')} "
            f"| {cell(f'{n}/push hook cold')} | {ms(added)} |"
        )
    lines += [
        "",
        "Ratios to the floor:",
        "",
        "| repository | `check` warm | `check` cold | push + hook − push `--no-verify` |",
        "|---|---:|---:|---:|",
    ]
    for p in every:
        n = p.name
        cold = f"{t[f'{n}/check cold'] / floor:.2f} ×" if f"{n}/check cold" in t else "–"
        added = (t[f"{n}/push hook"] - t[f"{n}/push plain"]) / floor
        lines.append(f"| {n} | {t[f'{n}/check'] / floor:.2f} × | {cold} | {added:.2f} × |")

    lines += [
        "",
        f"Where a `check` at {b} spends its time, in-process (medians):",
        "",
        "| phase | warm | cold |",
        "|---|---:|---:|",
    ]
    what = {
        "import": "importing evaluate, gates, ledger, gitio (after click and git)",
        "trees": "finding each revision's ledger tree (`cat-file`)",
        "index": "the ledger index: read (warm), or built from every event (cold)",
        "view": "settling entities from the index; reading the rest in full",
        "decide": "assessing and deciding (evaluate − view)",
    }
    for key, label in what.items():
        lines.append(f"| {label} | {ms(r.phases['warm'][key])} | {ms(r.phases['cold'][key])} |")
    warm = r.phases["warm"]
    lines.append(
        f"| entities settled from the index / read in full | {warm['settled']:,.0f} "
        f"/ {warm['full']:,.0f} | |"
    )
    lines.append(
        f"| importing failgate's modules for `check`, out of process (− floor) "
        f"| {ms(t['imports'] - floor)} | |"
    )
    lines += [
        "",
        "Git processes the hook starts on one push (trace2: with the hook − without):",
        "",
    ]
    lines += [f"- {p.name}: {sum(p.hook_git.values())}: {describe(p.hook_git)}" for p in every]
    lines += ["", "Git processes one `check` starts:", ""]
    lines += [f"- {p.name}: {sum(p.check_git.values())}: {describe(p.check_git)}" for p in every]
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
        lines += [
            "",
            "A clean checkout for a verifier run (`verify.Checkouts`): *cold* is the first of",
            "a commit (`read-tree` into a temporary index, then `checkout-index`); *warm* is",
            "each later verifier of the same commit (the index is reused).",
            "",
            "| checkout | wall time |",
            "|---|---:|",
        ]
        lines += [f"| {what} | {ms(took)} |" for what, took in r.mono.checkouts]
    lines += ["", *HOW, "", "## Notes", ""] + [f"- {note}" for note in r.notes]
    return "\n".join(lines) + "\n"


HOW = """\
## What keeps the hook's cost flat

- **A ledger index per ledger tree** (`failgate_hooks/ledgerindex.py`), under
  `<git-common-dir>/failgate/index/`: for every entity, its files (blob ids), title,
  status, remaining events and the scopes applicability judges, worked out once from a
  full read. A decision reads in full only the entities that may apply, that differ
  between the revisions read, or that no protected revision holds (their relaxations
  must be listed); every other entity is decided from its scopes, which thousands of
  entities share. A tree id names the ledger's bytes forever, so the index never goes
  stale; it carries a format version (with a hash of the sources that resolve and
  assess) and a sha256, is type-checked as it is read, and is rebuilt when anything is
  off. `tests/test_ledgerindex.py` checks, on random ledgers spread over revisions,
  that every decision equals the one from reading every entity.
- **The first run builds the index on both cores.** A clean ledger's entities resolve
  alone, so a forked child (`failgate_hooks/forked.py`: Linux, no other thread
  running) and the process share them out in parts, the child from the first, the
  process from the last, until they meet; the child reads with its own `cat-file`
  and sends each part as it ends it, and a child that fails in any way leaves the
  parts it did not send to the parent. A clean tree's files are read without a
  union's bookkeeping (one revision, no id twice: the listing checked), blobs are
  parsed as git streams them (every id asked at once), a line seen before is parsed
  once (`toml_subset`), a usual event file is validated in one pass, the usual entity
  resolves as a chain, and the collector is off.
- **Parsed events are cached by blob id** under `<git-common-dir>/failgate/parsed/`
  (`failgate_hooks/parsecache.py`) by the reads of every event that recur: a ledger
  the index cannot serve (a file outside an entity folder, an id held twice), and
  export, fsck and replay. A clean ledger's first index keeps none. JSON in
  shards, each versioned and checksummed, every record type-checked as it is decoded.
  Writes are write-then-rename; a read-only cache is no cache. Deleting either folder
  is always safe.
- **No cycle collection in a program's run, nor at its exit** (`collector.program_run`):
  a run's objects are frozen at its end, out of the sight of the interpreter's last
  collection.
- **No listing of the ledger on a warm run.** Each revision's ledger tree is found
  through the running `cat-file`; a `paths` scope lists only the folder its glob's
  literal prefix names, not the commit's whole tree.
- **Append-only compares trees first.** An update whose old and new tips hold the same
  ledger tree has nothing to compare; the retractions are read only when a deletion
  needs them.
- **Nothing read from the working tree** on the hook's path, no click imported there,
  and nothing that writes TOML, renders Markdown, scans for credentials or draws progress
  bars (`tests/test_performance.py` checks both, and counts git processes).
- **`check`'s look for uncommitted ledger files** runs in a forked child while it
  decides (waiting while a first index keeps both cores busy), and reads the ledger's
  folders only when one changed since a look that found nothing (their mtimes are
  kept, as git's untracked cache keeps them; `failgate_hooks/worktree.py`).
- **A gate's `inputs` are keyed by their folders' tree ids** (`verify.InputKeys`):
  a push lists no folder it has seen before, and never the whole monorepo.""".splitlines()


def describe(counts: Counter[str]) -> str:
    return ", ".join(f"{name} ×{n}" if n > 1 else name for name, n in sorted(counts.items()))


# ---------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/bench.py", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="timed rounds (medians)")
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
        ledgers = []
        for events in args.events:
            start = time.perf_counter()
            world = build.ledger_world(root / f"ledger-{events}", events)
            ledgers.append(prepare(bench, f"{events:,} events", world))
            took = time.perf_counter() - start
            print(f"  {events:,} events: built and prepared in {took:.1f} s", flush=True)
        mono = None
        if args.files:
            start = time.perf_counter()
            world = build.monorepo_world(root / "monorepo", args.files, args.gates)
            print(f"  monorepo built in {time.perf_counter() - start:.1f} s", flush=True)
            mono = monorepo_work(bench, world, args.files, args.gates)

        print("timing", flush=True)
        cases = [Case("floor", FLOOR, ROOT), Case("imports", IMPORTS, ROOT)]
        for prepared in ledgers:
            cases += cases_for(prepared, cold=True)
        if mono is not None:
            cases += cases_for(mono.prepared, cold=False)
        medians = bench.rounds(cases, args.runs)
        print("phases", flush=True)
        where = phases(bench, ledgers[-1].world, max(3, args.runs // 2))
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
        if checkout_dir.endswith("(tmpfs)"):
            shutil.rmtree(env["TMPDIR"], ignore_errors=True)
    bench.notes.append(f"the whole run took {time.perf_counter() - started:.0f} s")
    text = report(
        Results(command, args.runs, checkout_dir, medians, ledgers, mono, where, bench.notes)
    )
    print()
    print(text)
    if args.out != "-":
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
