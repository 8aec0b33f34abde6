"""The hooks' process level: arguments, stdin and environment in; text and exit code out.

The hooks run on every push, so this path imports no click: what a hook prints
is plain text on standard error, and the modules that decide are imported only
once a hook runs (`failgate install`'s script and the console scripts start here).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, NoReturn, TextIO

from failgate_hooks.commands.environment import trust_ledger_requested
from failgate_hooks.commands.output import echo, neutralise_tracebacks
from failgate_hooks.commands.signals import Terminated, ended_by_signals
from failgate_hooks.core import exitcodes
from failgate_hooks.core.errors import FailgateError, UsageError
from failgate_hooks.core.sanitize import clean_line, shown_ref

if TYPE_CHECKING:
    from failgate_hooks.app.evidence import EvidenceCheck
    from failgate_hooks.app.push import HookRun, PushReport
    from failgate_hooks.app.runner import VerifierRunner
    from failgate_hooks.git.repo import GitRepo
    from failgate_hooks.ledger.config import Config

ONE_REF_NOTE = (
    "NOTE: under pre-commit only the first pushed ref is checked ({ref}); pre-commit never "
    "shows deletions or refs whose commits the remote already has. To check every ref, "
    "use the plain hook (failgate install), the server hook (failgate-pre-receive) or CI "
    "(failgate ci)."
)


def run_pre_push(args: Sequence[str], stdin: TextIO, environ: Mapping[str, str]) -> int:
    """`failgate-pre-push REMOTE URL`, fed git's stdin, or pre-commit's variables."""
    from failgate_hooks.app.hook_input import as_fetched, from_pre_commit, parse_pre_push
    from failgate_hooks.app.push import pre_push
    from failgate_hooks.git.repo import GitRepo

    if "PRE_COMMIT" in environ and args:
        # pre-commit passes the hook only the config's args (and file names, if told
        # to): `args: [-h]` would pass every push, `args: [other]` read another remote.
        raise UsageError(
            "under pre-commit failgate-pre-push takes no arguments, and was given "
            f"{clean_line(' '.join(args), 200)}: it reads the remote and the pushed ref "
            "from pre-commit's PRE_COMMIT_* variables",
            hint="in .pre-commit-config.yaml, give the failgate hook no args and no "
            "pass_filenames: true",
        )
    if any(a in HELP_FLAGS for a in args):
        echo(PRE_PUSH_HELP, nl=False)
        return exitcodes.ALLOWED
    trust_ledger = trust_ledger_requested(environ)
    remote = args[0] if args else environ.get("PRE_COMMIT_REMOTE_NAME", "")
    text = "" if stdin.isatty() else stdin.read()
    updates = parse_pre_push(text)
    note = None
    if not updates:
        update = from_pre_commit(environ)
        if update is None and "PRE_COMMIT" not in environ:
            # git runs the hook with empty stdin when nothing is to be pushed (an
            # up-to-date branch): a push with nothing to check.
            return exitcodes.ALLOWED
        if update is None:
            raise UsageError(
                "nothing identifies the pushed commit: pre-commit set neither "
                "PRE_COMMIT_TO_REF nor PRE_COMMIT_LOCAL_BRANCH",
                hint="run it as a pre-push hook (pre-commit install --hook-type pre-push), or "
                "by hand with pre-commit run --hook-stage pre-push --from-ref A --to-ref B",
            )
        updates = [update]
        note = ONE_REF_NOTE.format(ref=update.remote_ref)
    if not remote:
        raise UsageError("usage: failgate-pre-push REMOTE URL (git passes both to the hook)")
    with GitRepo.open() as repo, ExitStack() as cleanup:
        if note is not None:  # pre-commit's: its FROM_REF is not always the remote's tip
            updates = [as_fetched(repo, remote, u) for u in updates]
        run = _hook_run(repo, cleanup, trust_ledger=trust_ledger)
        report = pre_push(run, remote, updates, trust_ledger=trust_ledger)
    _print_report(report, note)
    return report.exit_code


def run_pre_receive(args: Sequence[str], stdin: TextIO, environ: Mapping[str, str]) -> int:
    """`failgate-pre-receive [--exec] [--no-sandbox]` in a server's repository, fed
    `<old> <new> <ref>`. `--exec` runs verifiers, in the sandbox unless `--no-sandbox`."""
    from failgate_hooks.app.hook_input import parse_pre_receive
    from failgate_hooks.app.push import pre_receive
    from failgate_hooks.git.evidence import EVIDENCE_REF
    from failgate_hooks.git.evidence import resolve as resolve_evidence
    from failgate_hooks.git.repo import GitRepo

    if any(a in HELP_FLAGS for a in args):
        echo(PRE_RECEIVE_HELP, nl=False)
        return exitcodes.ALLOWED
    namespace = environ.get("GIT_NAMESPACE")
    if namespace:
        # git hands the hook the names inside the namespace, while every git command the
        # hook runs reads the whole repository's refs: the wrong tips and default branch.
        raise UsageError(
            f"git namespaces are not supported (GIT_NAMESPACE={clean_line(namespace, 80)}): "
            "failgate would judge this push against refs outside the namespace",
            hint="serve this project from a repository of its own, without GIT_NAMESPACE",
        )
    if ACCEPT_TIPS in args:
        return _accept_current_tips(args)
    args, signers_file = _evidence_signers_flag(args)
    unknown = [a for a in args if a not in ("--exec", "--sandbox", "--no-sandbox")]
    if unknown:
        raise UsageError(f"{PRE_RECEIVE_USAGE}; unknown {' '.join(unknown)}")
    if "--sandbox" in args and "--no-sandbox" in args:
        raise UsageError(f"{PRE_RECEIVE_USAGE}; --sandbox and --no-sandbox contradict each other")
    exec_verifiers = "--exec" in args
    # Pushed code runs here: without a sandbox only when told so.
    sandbox_by = None if "--no-sandbox" in args else PRE_RECEIVE_SANDBOX
    updates = parse_pre_receive(stdin.read())
    with GitRepo.open() as repo, ExitStack() as cleanup:
        # Statements pushed now are read by object id: inside the quarantine no ref names them.
        pushed = [u.new for u in updates if u.remote_ref == EVIDENCE_REF and not u.is_delete]
        tips = [tip for tip in (resolve_evidence(repo), *pushed) if tip]
        signers = None if signers_file is None else _read_signers(signers_file)
        run = _hook_run(
            repo, cleanup, trust_ledger=True, sandbox_by=sandbox_by, tips=tips, signers=signers
        )
        report = pre_receive(run, updates, exec_verifiers=exec_verifiers, environ=environ)
    holds = any(o.decision is not None and o.decision.policy.hold_open for o in report.outcomes)
    note = None if exec_verifiers else (_EVIDENCE_NOTE if holds else _NO_EXEC_NOTE)
    _print_report(report, note)
    return report.exit_code


def _accept_current_tips(args: Sequence[str]) -> int:
    """An administrator's vouching, once, after installing or upgrading the server hook:
    every ref the default branch enforces on counts as reviewed as it stands now."""
    from failgate_hooks.app.accepted_tips import enforced_tips, remember
    from failgate_hooks.git.repo import GitRepo

    if list(args) != [ACCEPT_TIPS]:
        raise UsageError(f"{ACCEPT_TIPS} takes no other argument")
    with GitRepo.open() as repo:
        tips = enforced_tips(repo)
        problem = remember(repo, tips)
    if problem:
        raise UsageError(problem)
    for ref, commit in tips:
        echo(f"accepted {shown_ref(ref)} at {commit[:12]}")
    echo(f"failgate-pre-receive: {len(tips)} ref tip(s) count as reviewed")
    return exitcodes.ALLOWED


def _hook_run(
    repo: GitRepo,
    cleanup: ExitStack,
    *,
    trust_ledger: bool,
    sandbox_by: str | None = None,
    tips: Sequence[str] | None = None,
    signers: bytes | None = None,
) -> HookRun:
    """The push's verifier runner and evidence lookup for each configuration, each closed
    when the hook ends."""
    from failgate_hooks.app.push import HookRun
    from failgate_hooks.app.runner import VerifierRunner, evidence_check

    def runner(config: Config) -> VerifierRunner:
        made = VerifierRunner(
            repo, config, trust_ledger=trust_ledger, no_cache=False, sandbox_by=sandbox_by
        )
        cleanup.callback(made.close)
        return made

    def evidence(config: Config) -> EvidenceCheck | None:
        check = evidence_check(repo, config, tips=tips, signers=signers)
        if check is not None:
            cleanup.callback(check.close)
        return check

    return HookRun(repo, runner, make_evidence=evidence)


def _evidence_signers_flag(args: Sequence[str]) -> tuple[list[str], str | None]:
    """The arguments without `--evidence-signers FILE`, and FILE."""
    rest, found = [], None
    items = iter(args)
    for arg in items:
        if arg == "--evidence-signers":
            found = next(items, None)
            if not found:
                raise UsageError(f"{PRE_RECEIVE_USAGE}; --evidence-signers needs a FILE")
        elif arg.startswith("--evidence-signers="):
            found = arg.partition("=")[2]
        else:
            rest.append(arg)
    return rest, found


def _read_signers(path: str) -> bytes:
    """The server's own allowed-signers file; a usage error when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise UsageError(
            f"--evidence-signers {path}: cannot read it ({exc.strerror or exc})",
            hint="give the path of an OpenSSH allowed-signers file on this server",
        ) from None


# What a hook says when it read no protected revision (a first push to an empty remote).
HOOK_ADVICE = (
    "the hook reads the remote's default branch once this repository has it (push it, "
    "or fetch it); failgate check --verbose lists them"
)

ACCEPT_TIPS = "--accept-current-tips"
PRE_RECEIVE_USAGE = (
    "usage: failgate-pre-receive [--exec] [--sandbox | --no-sandbox] [--evidence-signers FILE]"
    f" | {ACCEPT_TIPS}"
)
HELP_FLAGS = ("--help", "-h")
PRE_RECEIVE_HELP = f"""{PRE_RECEIVE_USAGE}

The server's gate: git runs it as a bare repository's pre-receive hook and feeds
it one '<old> <new> <ref>' line per pushed ref. Relaxing events count only from
the default branch or from a pusher listed in relaxers (identity_env names the
variable the pusher's name is read from). Exit 0 accepts the push.

  --exec        run verifiers (without it, an open gate only warns here,
                unless require_evidence holds it until signed evidence covers it)
  --sandbox     run them in bubblewrap (the default with --exec)
  --no-sandbox  run them without a sandbox
  --evidence-signers FILE
                the allowed-signers file whose signed evidence clears a gate
                (else the one a protected revision's config names)

A ref's old tip counts as reviewed only if this hook accepted it while it
enforced there. After installing or upgrading it, an administrator may run,
once, in the server's repository (no push, no input):

  --accept-current-tips
                every ref the default branch's configuration enforces on
                counts as reviewed as it stands now: you vouch for it
"""
PRE_PUSH_HELP = """usage: failgate-pre-push REMOTE URL

The client's gate: git runs it as the pre-push hook (failgate install writes it;
pre-commit runs it with --hook-stage pre-push) and feeds it one
'<local ref> <local oid> <remote ref> <remote oid>' line per pushed ref. Exit 0
lets the push through. By hand: pre-commit run --hook-stage pre-push
--from-ref A --to-ref B, or failgate check --ref REF.
"""
PRE_RECEIVE_SANDBOX = (
    "failgate-pre-receive --exec runs verifiers in a sandbox; --no-sandbox runs them without"
)
_EVIDENCE_NOTE = (
    "NOTE: this server runs no verifier: an open gate on a protected ref is held unless "
    "signed evidence covers it (require_evidence)."
)
_NO_EXEC_NOTE = (
    "NOTE: this server runs no verifier (failgate-pre-receive without --exec): open gates "
    "warn here and are enforced by the client hook and CI."
)


def _print_report(report: PushReport, note: str | None) -> None:
    """Everything on standard error, in order, so the verdict is what the pusher reads last;
    `note` only with a refusal."""
    from failgate_hooks.render.text import render_text

    color = sys.stderr.isatty()
    blocks = []
    for outcome in report.outcomes:
        lines = [f"NOTE {clean_line(n)}" for n in outcome.notes]
        if outcome.decision is None:
            lines.append(f"DELETE {shown_ref(outcome.update.remote_ref)}: allowed")
        else:
            lines.append(render_text(outcome.decision, color=color, unprotected_advice=HOOK_ADVICE))
        blocks.append("\n".join(lines))
    # The note comes with a refusal only, so that a push that passes stays a few lines
    # (under pre-commit, whose hook is verbose so that a warning reaches the pusher).
    if note and report.exit_code != exitcodes.ALLOWED:
        blocks.insert(0, note)
    # first, so that the verdict stays what the pusher reads last
    for warning in reversed(report.warnings):
        blocks.insert(0, f"failgate: warning: {clean_line(warning)}")
    if len(report.outcomes) > 1:
        refused = [
            o.update.remote_ref
            for o in report.outcomes
            if o.decision is not None and o.decision.exit_code != 0
        ]
        if refused:
            summary = f"failgate: push refused: {', '.join(shown_ref(r) for r in refused)} blocked"
        else:
            summary = f"failgate: all {len(report.outcomes)} refs may be pushed"
        blocks.append(summary)
    say("\n\n".join(blocks))


# --------------------------------------------------------------------------- the process


def say(text: str) -> None:
    """One message on standard error (git shows the pusher a hook's stderr)."""
    echo(text, err=True)


def error_lines(error: FailgateError) -> list[str]:
    """An expected failure as people read it: what, where, and what to do."""

    lines = [f"failgate: {clean_line(error.message)}"]
    if error.hint:
        lines.append(f"  hint: {clean_line(error.hint)}")
    return lines


def _hook_exit(name: str, body: Callable[[], int]) -> NoReturn:
    """Run a hook's body; an expected failure refuses the push with its message."""
    neutralise_tracebacks()
    with ended_by_signals():
        try:
            code = body()
        except FailgateError as error:
            say("\n".join(error_lines(error)))
            say(f"{name}: push refused (failgate could not decide).")
            code = error.exit_code if error.exit_code != exitcodes.USAGE else exitcodes.INTEGRITY
        except KeyboardInterrupt:
            say(f"{name}: interrupted: push refused.")
            code = exitcodes.INTERRUPTED
        except Terminated as stop:
            say(f"{name}: {signal.Signals(stop.signum).name}: push refused.")
            raise
    sys.exit(code)


def pre_push_main(argv: list[str] | None = None) -> None:
    """Console script `failgate-pre-push REMOTE URL` (plain git hook or pre-commit)."""
    args = sys.argv[1:] if argv is None else argv
    _hook_exit("failgate-pre-push", lambda: run_pre_push(args, sys.stdin, os.environ))


def pre_receive_main(argv: list[str] | None = None) -> None:
    """Console script `failgate-pre-receive [--exec] [--no-sandbox]` for a bare repository."""
    args = sys.argv[1:] if argv is None else argv
    _hook_exit("failgate-pre-receive", lambda: run_pre_receive(args, sys.stdin, os.environ))
