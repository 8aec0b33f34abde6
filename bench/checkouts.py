"""`make bench`, verifier checkouts: what one verifier run costs in a 50,000-file repository.

Builds a repository of N files of 20 lines and one push gate whose verifier is
`python3 checks/ok.py` (exit 0), then times, in rounds, each round running
every case once after a new commit that changes one file, so that no pass is
cached and a change of load hits every case alike (medians):

- `git status --porcelain --ignored -uall` in the verifiers' checkout: the
  floor of any stat-based proof that a checkout holds a commit;
- the preparation of that checkout for a commit that changed one file;
- `failgate check` that runs the verifier, the same `check` with its pass
  cached, and the verifier alone;
- `failgate replay` over the last 10 commits;
- `failgate check` with the pool empty, as the first run after a clone.

With `--before REV` the same cases run again with REV's failgate_hooks (taken
out with `git archive`), for the before/after table: `--before main` before the
pool was merged. The report is the "Verifier checkouts" section of
docs/performance.md, replaced in place. Run it as `python bench/checkouts.py`;
`make bench` runs it after bench.py.
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
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "docs" / "performance.md"
SECTION = "## Verifier checkouts"
SECTION_END = "<!-- end of the verifier checkouts section -->"
PY = sys.executable
KEY = "bench:checkouts:ok"
LINES = "".join(f"line {n} of a file that is twenty lines long\n" for n in range(20))
# The limits: prepare ÷ status, check ÷ (cached + verifier), replay ÷ (10 verifiers + cached)
PREPARE_LIMIT, CHECK_LIMIT, REPLAY_LIMIT = 3.0, 2.5, 4.0
LOAD_SAMPLES: list[float] = []  # the 1-minute load average after each round, for the report

# Run in a fresh process: time moving the checkout to one commit, print where it is.
_PREPARE = """\
import json, sys, time
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.verify.checkout import Checkouts
with GitRepo.open(".") as repo, Checkouts(repo) as checkouts:
    started = time.perf_counter()
    with checkouts.checkout(sys.argv[1], "ledger") as root:
        took = time.perf_counter() - started
print(json.dumps({"seconds": took, "root": root}))
"""


def git_env(base: Mapping[str, str]) -> dict[str, str]:
    """`base` with git isolated from the machine's config and no inherited git variables."""
    env = {k: v for k, v in base.items() if not k.startswith("GIT_")}
    env.pop("FAILGATE_TRUST_LEDGER", None)
    env.update(
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Bench",
        GIT_AUTHOR_EMAIL="bench@example.org",
        GIT_COMMITTER_NAME="Bench",
        GIT_COMMITTER_EMAIL="bench@example.org",
    )
    return env


class Bench:
    """The repository, the environment every command runs in, and the cases' times."""

    def __init__(self, root: Path, files: int, code: str | None) -> None:
        self.root = root
        self.work = root / "repo"
        self.cache = root / "cache"
        self.env = git_env(os.environ)
        self.env["XDG_CACHE_HOME"] = str(self.cache)
        # Temporary checkouts (the code before the pool) on the pool's disk: like with like.
        self.env["TMPDIR"] = str(root / "tmp")
        (root / "tmp").mkdir(parents=True)
        self.env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.env["PYTHONPATH"] = code or str(ROOT)
        self.files = files
        self.times: dict[str, list[float]] = {}
        self.changes = 0

    def run(self, argv: Sequence[str], cwd: Path | None = None, **extra: str) -> str:
        """Run `argv`; its standard output. Exit 0 and 1 (a held gate) are both answers."""
        proc = subprocess.run(
            list(argv),
            cwd=cwd or self.work,
            env={**self.env, **extra},
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode not in (0, 1):
            raise SystemExit(f"bench: {shlex.join(argv)} failed:\n{proc.stdout}{proc.stderr}")
        return proc.stdout

    def timed(self, key: str, argv: Sequence[str], cwd: Path | None = None, **extra: str) -> str:
        started = time.perf_counter()
        out = self.run(argv, cwd, **extra)
        self.times.setdefault(key, []).append(time.perf_counter() - started)
        return out

    def failgate(self, *args: str) -> list[str]:
        return [PY, "-m", "failgate_hooks", *args]

    # ------------------------------------------------------------------ the repository

    def build(self) -> None:
        """N files in folders of 100, the verifier and its event: one fast-import, one record."""
        self.work.mkdir(parents=True)
        self.run(["git", "init", "-q", "-b", "main"])
        stream = [b"commit refs/heads/main\ncommitter Bench <bench@example.org> 0 +0000\n"]
        stream.append(b"data 5\nfiles\n")
        for number in range(self.files):
            path = f"src/d{number // 1000:03d}/e{number // 100 % 10}/f{number}.txt"
            data = (LINES + f"{number}\n").encode()
            stream.append(f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n")
        check = b"import sys\nsys.exit(0)\n"
        stream.append(f"M 100644 inline checks/ok.py\ndata {len(check)}\n".encode() + check)
        subprocess.run(
            ["git", "fast-import", "--quiet"],
            cwd=self.work,
            input=b"".join(stream),
            env=self.env,
            check=True,
        )
        self.run(["git", "reset", "-q", "--hard", "main"])
        record = self.failgate(
            "record", KEY, "--status", "observed", "--title", "the bench's gate",
            "--trigger", "push", "--verify", "python3 checks/ok.py",
            "--verify-file", "checks/ok.py", "--no-probe",
        )  # fmt: skip
        self.run(record)
        self.run(["git", "add", "-A", "ledger"])
        self.run(["git", "commit", "-q", "-m", "the gate"])

    def change_one_file(self) -> str:
        """A new commit that changes one file; its id."""
        self.changes += 1
        target = self.work / "src" / "d000" / "e0" / f"f{self.changes % 100}.txt"
        target.write_text(LINES + f"change {self.changes}\n")
        self.run(["git", "add", str(target)])
        self.run(["git", "commit", "-q", "-m", f"change {self.changes}"])
        return self.run(["git", "rev-parse", "HEAD"]).strip()

    # ------------------------------------------------------------------ the cases

    def check(self, key: str, **extra: str) -> None:
        out = self.timed(
            key,
            self.failgate("check", "--trigger", "push", "--ref", "refs/heads/main", "--json"),
            None,
            **extra,
            FAILGATE_TRUST_LEDGER="1",
        )
        if json.loads(out)["decision"] != "allowed":
            raise SystemExit(f"bench: {key}: the gate did not clear:\n{out}")

    def round(self, new_code: bool, first_run: bool) -> None:
        """Every case once, each after the same kind of one-file commit."""
        commit = self.change_one_file()
        self.check("check")
        self.check("cached")
        if first_run:
            empty = tempfile.mkdtemp(dir=self.root, prefix="empty-cache-")
            self.change_one_file()
            self.check("first", XDG_CACHE_HOME=empty)
            shutil.rmtree(empty, ignore_errors=True)
        commit = self.change_one_file()
        prepared = json.loads(self.run([PY, "-c", _PREPARE, commit]))
        self.times.setdefault("prepare", []).append(prepared["seconds"])
        checkout = Path(prepared["root"])
        if new_code:
            self.status(checkout, commit)
        if checkout.is_dir():
            self.timed("verifier", ["python3", "checks/ok.py"], cwd=checkout)
        self.timed("replay", self.failgate("replay", "HEAD~9..HEAD", "--entity", KEY, "--json"))

    def status(self, checkout: Path, commit: str) -> None:
        """`git status` of the pool's checkout, as a person would run it there: HEAD at a
        commit of the tree the checkout holds, C's without its ledger folder."""
        slot = checkout.parent
        pool = slot.parent
        env = {
            "GIT_DIR": str(pool / "git"),
            "GIT_WORK_TREE": str(checkout),
            "GIT_INDEX_FILE": str(slot / "index"),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(self.work / ".git" / "objects"),
        }
        tree = json.loads((slot / "state.json").read_text())["tree"]
        held = self.run(
            ["git", "commit-tree", tree, "-m", f"{commit} less its ledger"], checkout, **env
        )
        self.run(["git", "update-ref", "refs/heads/main", held.strip()], checkout, **env)
        out = self.timed(
            "status",
            ["git", "-c", "core.bare=false", "--no-optional-locks", "status", "--porcelain",
             "--ignored", "-uall"],
            checkout, **env,
        )  # fmt: skip
        if out:
            raise SystemExit(f"bench: the prepared checkout is not clean:\n{out[:2000]}")


# ---------------------------------------------------------------------------- the report


def machine() -> str:
    git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    return (
        f"{platform.system()} {platform.machine()}, `nproc` = {os.cpu_count()}, "
        f"Python {platform.python_version()}, {git}"
    )


def ms(seconds: float | None) -> str:
    return "–" if seconds is None else f"{seconds * 1000:,.0f} ms"


def report(
    command: str,
    files: int,
    rounds: int,
    after: Mapping[str, float],
    before: Mapping[str, float] | None,
    before_code: str | None,
    took: float,
) -> str:
    """The Markdown report: targets, medians, and before/after when measured."""

    def ratio(value: float, base: float) -> str:
        return f"{value / base:.2f} ×"

    def verdict(value: float, base: float, limit: float) -> str:
        return "met" if value / base <= limit else "**not met**"

    status, prepare = after["status"], after["prepare"]
    check, cached, verifier, replay = (after[k] for k in ("check", "cached", "verifier", "replay"))
    # Before, against the same floors: the checkout and the verifier are the same ones.
    was = dict(before or {})
    rows = [
        ("preparing the checkout for a one-file commit ÷ `git status --porcelain --ignored -uall`",
         prepare, was.get("prepare"), status, status, PREPARE_LIMIT),
        ("`check` that runs the verifier ÷ (the same `check`, pass cached + the verifier alone)",
         check, was.get("check"), cached + verifier, was.get("cached", 0.0) + verifier,
         CHECK_LIMIT),
        ("`replay` of 10 commits ÷ (10 × the verifier alone + one cached `check`)",
         replay, was.get("replay"), 10 * verifier + cached,
         10 * verifier + was.get("cached", 0.0), REPLAY_LIMIT),
    ]  # fmt: skip
    lines = [
        SECTION,
        "",
        "What one verifier run costs when the repository is large. This section is the",
        "output of `bench/checkouts.py` (which `make bench` runs after the tables above),",
        "one run on one machine, so its ratios compare like with like.",
        "",
        f"- command: `{command}`",
        f"- machine: {machine()}",
        f"- load average (1 minute) after each round: {min(LOAD_SAMPLES, default=0):.1f} to "
        f"{max(LOAD_SAMPLES, default=0):.1f}; other work on the",
        "  machine slows every case alike, the verifier's own start too: the ratios hold",
        "  better than the times",
        f"- date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        f"- repository: {files:,} files of 20 lines in folders of 100, one push gate whose",
        "  verifier is `python3 checks/ok.py` (exit 0); everything on the same disk, the pool",
        "  in the bench's own `XDG_CACHE_HOME`",
        f"- method: {rounds} rounds; each makes a new commit that changes one file before each",
        "  case that needs one (no pass cached), runs every case once, each a fresh process,",
        "  and each figure is the median over the rounds",
        "",
        "### Targets",
        "",
        "| target | measured | limit | | before |",
        "|---|---:|---:|---|---:|",
    ]
    for what, value, old, base, old_base, limit in rows:
        then = "–" if old is None else ratio(old, old_base)
        lines.append(
            f"| {what} | {ratio(value, base)} | ≤ {limit:g} × | {verdict(value, base, limit)} "
            f"| {then} |"
        )
    lines += [
        "",
        "### Medians",
        "",
        "| case | after | before |" if before is not None else "| case | time |",
        "|---|---:|---:|" if before is not None else "|---|---:|",
    ]
    cases = [
        ("status", "`git status --porcelain --ignored -uall` in the checkout"),
        ("prepare", "preparing the checkout for a one-file commit (in-process)"),
        ("check", "`check` that runs the verifier"),
        ("cached", "`check`, pass cached"),
        ("verifier", "the verifier alone"),
        ("replay", "`replay` of 10 consecutive commits"),
        ("first", "`check` with the pool empty (the first run after a clone)"),
    ]
    for key, what in cases:
        cells = [ms(after.get(key))]
        if before is not None:
            cells.append(ms(before.get(key)))
        lines.append(f"| {what} | {' | '.join(cells)} |")
    if before is not None:
        lines += [
            "",
            f"*Before* is `{before_code}`: each verifier run wrote the whole tree into a new",
            "temporary folder (`read-tree` + `checkout-index --all`) and removed it, so its",
            "preparation is that write, and its first run is any run.",
        ]
    lines += [
        "",
        "Where the checkouts live, how each is proven, and which cases still write a fresh",
        "one: [checkouts.md](checkouts.md).",
    ]
    lines += ["", f"The whole run took {took:.0f} s.", "", SECTION_END, ""]
    return "\n".join(lines)


def with_section(page: str, section: str) -> str:
    """`page` with its verifier checkouts section replaced by `section`, or added at the end."""
    start = page.find(SECTION)
    if start < 0:
        return page.rstrip("\n") + "\n\n" + section
    end = page.find(SECTION_END, start)
    rest = "" if end < 0 else page[end + len(SECTION_END) :].lstrip("\n")
    return page[:start] + section + ("\n" + rest if rest else "")


def code_at(revision: str, into: Path) -> str:
    """`revision`'s failgate_hooks, taken out of this repository into `into`; its folder."""
    into.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", revision, "failgate_hooks"],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return str(into)


def medians(times: Mapping[str, list[float]]) -> dict[str, float]:
    return {key: statistics.median(values) for key, values in times.items()}


def measure(
    root: Path, files: int, rounds: int, code: str | None, say: Callable[[str], None]
) -> dict[str, float]:
    bench = Bench(root, files, code)
    started = time.perf_counter()
    bench.build()
    say(f"  built {files:,} files in {time.perf_counter() - started:.1f} s")
    for _ in range(10):  # history for the first replay
        bench.change_one_file()
    bench.check("warm-up")  # the pool's first checkout, and Python's bytecode cache
    for number in range(rounds):
        bench.round(new_code=code is None, first_run=code is None and number < 3)
        LOAD_SAMPLES.append(os.getloadavg()[0])
        say(f"  round {number + 1}/{rounds}")
    found = medians(bench.times)
    if code is not None:
        found["first"] = found["check"]  # every run writes a whole checkout
    return found


def _project_relative(arg: str) -> str:
    path = Path(arg)
    if path.is_absolute() and path.is_relative_to(ROOT):
        return str(path.relative_to(ROOT))
    return arg


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/checkouts.py", description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=50_000, help="files in the repository")
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds (medians)")
    parser.add_argument("--before", metavar="REV", help="also time REV's failgate_hooks")
    parser.add_argument("--before-rounds", type=int, default=1, help="rounds for --before")
    parser.add_argument("--out", default=str(REPORT), help="report file; '-' writes none")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    given = list(sys.argv[1:] if argv is None else argv)
    # the report names files as the project does, never by this machine's paths
    shown = [_project_relative(arg) for arg in given]
    command = shlex.join(["python", "bench/checkouts.py", *shown])
    started = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix="failgate-bench-checkouts-"))
    try:
        print("verifier checkouts: after", flush=True)
        after = measure(root / "after", args.files, args.rounds, None, print)
        before = None
        if args.before:
            print(f"verifier checkouts: before ({args.before})", flush=True)
            code = code_at(args.before, root / "before-code")
            before = measure(root / "before", args.files, args.before_rounds, code, print)
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    text = report(
        command,
        args.files,
        args.rounds,
        after,
        before,
        args.before,
        time.perf_counter() - started,
    )
    print()
    print(text)
    if args.out != "-":
        out = Path(args.out)
        page = out.read_text(encoding="utf-8") if out.exists() else ""
        out.write_text(with_section(page, text), encoding="utf-8")
        print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
