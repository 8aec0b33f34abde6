"""What the command scan looks for: the words, options and variables that route around
the gate, and the findings it reports. Pure.

Most commands never reach the lexer: a scan for a few needles lets them go at
once. A commit whose message merely quotes `--no-verify` is no push.
"""

from __future__ import annotations

import enum
import re
from typing import NamedTuple

from failgate_hooks.core.agent.command_writes import WriteTarget

MAX_RECURSION = 8

# What a command must hold, once quotes and escapes are gone, to need more than a
# glance: a push, a bypass, a redirection, or a command that writes or runs code.
_NEEDLE_TEXTS = ("push", "no-ve", "hookspath", "git_config", "failgate", "include", "alias",
                 "skip", "git_dir", "git_common_dir", "xdg_config", "pre_commit", "pre-commit",
                 "git_allow_protocol", ">")  # fmt: skip
_NEEDLE_WORDS = frozenset({"rm", "rmdir", "unlink", "shred", "mv", "cp", "install", "ln", "rsync",
                           "scp", "tee", "touch", "truncate", "chmod", "chown", "chgrp", "mkdir",
                           "sed", "perl", "dd", "find", "curl", "wget", "node", "nodejs", "ruby",
                           "php", "deno", "bun", "git", "eval", "python", "pypy", "tar", "unzip",
                           "script", "watch", "su", "runuser", "sg", "systemd-run"})  # fmt: skip
_SQUASH = re.compile(r"\\\n|['\"\\]")

_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\+?=")
_KEYWORDS = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!",
                       "{", "}", "time", "coproc", "for", "select", "case"})  # fmt: skip

# Variables that change which git runs (GIT_EXEC_PATH: the remote helpers a push starts
# before its hook), which hooks it runs, which config it reads, or what the hooks decide.
_BYPASS_VARIABLES = re.compile(
    r"GIT_CONFIG.*|GIT_DIR|GIT_COMMON_DIR|GIT_EXEC_PATH|HOME|XDG_CONFIG_HOME|PATH|SKIP"
    r"|PRE_COMMIT.*|FAILGATE_.*"
)
# Config keys (lower case) naming a command git runs: on its way to a push, before the
# pre-push hook (`core.sshCommand`), or at a later git command (`core.fsmonitor` at `git
# status`, `core.pager` at `git log`), as git-config(1) lists them, each as its section (a
# pattern: a subsection is `\..*`) and its variables. What that command does is read as a
# command line: `git push --no-verify` there is a bypass.
_COMMAND_KEY_PARTS = (
    (r"remote\..*", "receivepack|uploadpack"), (r"credential(?:\..*)?", "helper"),
    ("core", "sshcommand|gitproxy|fsmonitor|editor|pager|askpass|alternaterefscommand"),
    ("sequence", "editor"), ("pager", ".*"), ("interactive", "difffilter"),
    ("gc", "recentobjectshook"), ("diff", "external"), (r"diff\..*", "command|textconv"),
    (r"merge\..*", "driver"), (r"filter\..*", "clean|smudge|process"),
    (r"(?:diff|merge)tool\..*", "cmd|path"), (r"gpg(?:\..*)?", "program"),
    (r"gpg\.ssh", "defaultkeycommand"), ("uploadpack", "packobjectshook"),
    (r"submodule\..*", "update"), (r"trailer\..*", "cmd|command"), (r"hook\..*", "command"),
    ("imap", "tunnel"), (r"sendemail(?:\..*)?", "sendmailcmd|smtpserver|tocmd|cccmd|headercmd"),
    (r"(?:man|browser)\..*", "cmd|path"), (r"guitool\..*", "cmd"), ("instaweb", "httpd"),
)  # fmt: skip
# Config keys that move or include the hooks, or move where git writes a commit's files
# (into the hooks): setting any of them can switch the gate off.
_HOOK_KEY_PARTS = (("core", "hookspath|worktree"), ("include", "path"), (r"includeif\..*", "path"))


def _keys(parts: tuple[tuple[str, str], ...]) -> re.Pattern[str]:
    return re.compile("|".join(rf"(?:{section})\.(?:{names})" for section, names in parts))


def _sections(parts: tuple[tuple[str, str], ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{section})" for section, _ in parts))


_COMMAND_KEYS = _keys(_COMMAND_KEY_PARTS)
_HOOK_KEYS = _keys(_HOOK_KEY_PARTS)
# The sections those keys live in (`core`, `diff.pdf`, `includeif.gitdir:~/x`), for `git
# config --rename-section OLD NEW`, which gives every key of OLD the name NEW.VARIABLE.
_COMMAND_SECTIONS = _sections(_COMMAND_KEY_PARTS)
_HOOK_SECTIONS = _sections(_HOOK_KEY_PARTS)
# The variables git reads for those commands, as git(1) lists them.
_COMMAND_VARIABLES = frozenset({"GIT_SSH_COMMAND", "GIT_PROXY_COMMAND", "GIT_SSH", "GIT_EDITOR",
                                "GIT_SEQUENCE_EDITOR", "VISUAL", "EDITOR", "GIT_PAGER", "PAGER",
                                "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS"})  # fmt: skip
# The variables git reads as `-c` pairs: `GIT_CONFIG_KEY_0` with `GIT_CONFIG_VALUE_0`.
_CONFIG_VARIABLE = re.compile(r"GIT_CONFIG_(KEY|VALUE)_([0-9]+)")


class RunOptions(NamedTuple):
    """A git command's options whose value is a command line git runs."""

    longs: tuple[str, ...]  # git takes any prefix of them; a value after `=` or next
    letter: str = ""  # the short option for one, in a cluster, its value attached or next
    valued: str = ""  # the short options that take a value: the rest of a cluster is it
    optional: bool = False  # the value is only ever attached (`-O<pager>`, `--opt=<pager>`)


# git commands that have git run a command the line names: the program on the other side
# of a transport (`--receive-pack`, `--upload-pack`: through the shell, for a local or ssh
# remote), a filter, an external diff, a mailer or a pager (each through the shell).
_SEND = RunOptions(("--receive-pack", "--exec"))
_FETCH = RunOptions(("--upload-pack", "--exec"))
_RUN_OPTIONS = {
    "push": _SEND, "send-pack": _SEND, "fetch": RunOptions(("--upload-pack",)),
    "pull": RunOptions(("--upload-pack",)), "clone": RunOptions(("--upload-pack",), "u", "obcju"),
    "ls-remote": _FETCH, "fetch-pack": _FETCH, "archive": RunOptions(("--exec",)),
    "difftool": RunOptions(("--extcmd",), "x", "tx"),
    "filter-branch": RunOptions(("--setup", "--env-filter", "--tree-filter", "--index-filter",
                                 "--parent-filter", "--msg-filter", "--commit-filter",
                                 "--tag-name-filter")),
    "send-email": RunOptions(("--sendmail-cmd", "--smtp-server", "--to-cmd", "--cc-cmd",
                              "--header-cmd")),
    "grep": RunOptions(("--open-files-in-pager",), "O", "ABCefmO", optional=True),
    "instaweb": RunOptions(("--httpd",), "d", "dmpb"),
    # through the shell, at each client's request: a fetch from it runs a push here
    "daemon": RunOptions(("--access-hook",), optional=True),
}  # fmt: skip
# The keys that let git use the ext:: transport, which runs its URL's command: set to
# anything but `never`, any ext:: URL git meets later runs, one the line does not show
# among them (a submodule's, from `.gitmodules`). GIT_ALLOW_PROTOCOL lists the allowed.
_EXT_ALLOW_KEYS = frozenset({"protocol.ext.allow", "protocol.allow"})
_ALLOW_VARIABLE = "GIT_ALLOW_PROTOCOL"
# What gives `git init` a template, whose files it copies into the repository where none
# is there yet: run in an existing one, a template's `commondir` moves its hooks elsewhere.
_TEMPLATE_OPTION = RunOptions(("--template",))
_TEMPLATE_KEY = "init.templatedir"
_TEMPLATE_VARIABLE = "GIT_TEMPLATE_DIR"
# The sections those keys live in: a rename onto one makes keys set earlier, unread, them.
_ALLOWING_SECTIONS = frozenset(k.rpartition(".")[0] for k in {*_EXT_ALLOW_KEYS, _TEMPLATE_KEY})
# `git clone -c KEY=VALUE` (`--config`): set in the new clone before it fetches, so a
# command key there (`core.sshCommand`) runs at once.
_CLONE_CONFIG = RunOptions(("--config",), "c", "obcju")
# git commands whose `ext::` URLs git runs the command of: at once, or at the next fetch of
# a remote or submodule added with one.
_URL_COMMANDS = frozenset({"push", "send-pack", "fetch", "pull", "clone", "ls-remote",
                           "fetch-pack", "archive", "remote", "submodule"})  # fmt: skip
# git commands that push without running the pre-push hook at all.
_HOOKLESS_PUSHES = frozenset({"send-pack", "http-push"})
# Other version-control tools that push to a git remote themselves, running none of git's
# hooks: the words that push, in order (`jj git push`, `sl push`).
_HOOKLESS_PROGRAMS = {"jj": "git push", "sl": "push"}

_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"})
# A script operand that is a descriptor the shell was handed (group 1: which), not a file.
_DESCRIPTOR_SCRIPT = re.compile(r"/dev/stdin|(?:/dev|/proc/[^/]+)/fd/([^/]+)")
_INTERPRETER = re.compile(
    r"python[0-9.]*|pypy[0-9.]*|node|nodejs|perl|ruby|php|deno|bun|expect|tclsh[0-9.]*"
)
_WRAPPERS = frozenset({"sudo", "doas", "env", "command", "builtin", "exec", "nohup", "time",
                       "nice", "ionice", "chrt", "taskset", "timeout", "stdbuf", "unbuffer",
                       "caffeinate", "setsid", "strace", "ltrace", "flock", "noglob",
                       "busybox", "unshare", "chroot", "chronic", "eatmydata", "nocache",
                       "pkexec", "su", "runuser", "sg", "script", "watch"})  # fmt: skip
_WRAPPER_VALUES = {
    "sudo": {"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "--user", "--group"},
    "doas": {"-u", "-C"}, "env": {"-u", "-C", "--unset", "--chdir"}, "nice": {"-n"},
    "ionice": {"-c", "-n", "-p"}, "timeout": {"-s", "-k", "--signal", "--kill-after"},
    "stdbuf": {"-i", "-o", "-e"}, "strace": {"-e", "-o", "-p", "-s", "-u"},
    "ltrace": {"-e", "-o", "-p", "-s", "-u"}, "exec": {"-a"}, "flock": {"-w", "-E"},
    "unshare": {"-S", "-G", "-R", "-w", "--setuid", "--setgid", "--root", "--wd"},
    "su": {"-s", "--shell", "-g", "--group", "-G", "--supp-group", "-w",
           "--whitelist-environment"},
    "runuser": {"-u", "--user", "-s", "--shell", "-g", "--group", "-G", "--supp-group", "-w",
                "--whitelist-environment"},
    "script": {"-E", "--echo", "-I", "--log-in", "-O", "--log-out", "-B", "--log-io", "-T",
               "--log-timing", "-m", "--logging-format"},
    "watch": {"-n", "--interval", "-q", "--equexit"}, "pkexec": {"--user"},
}  # fmt: skip
# Wrappers that join their command's words and hand the line to `sh -c`.
_JOINS_COMMAND = frozenset({"watch", "sg"})
# Wrappers whose first operand is theirs, not the command's (a duration, a mask, a lock).
_WRAPPER_OPERAND = frozenset({"timeout", "taskset", "flock", "chrt", "chroot", "su", "runuser",
                              "sg", "script"})  # fmt: skip
# Programs that run a command line in a shell of their own, later or in another terminal,
# whose directory and environment this hook cannot follow: what they run is unreadable.
# systemd-run's command runs in a unit of the service manager, in its environment.
_UNFOLLOWED = frozenset({"tmux", "screen", "byobu", "zellij", "dtach", "abduco", "systemd-run"})
# ssh runs its command on another machine, which may well be this one (`ssh localhost
# 'cd repo && git push --no-verify'`): a command, or commands on its input, are unreadable.
_REMOTE_SHELLS = frozenset({"ssh"})
_SSH_VALUES = "BbcDEeFIiJLlmOopQRSWw"  # its options that take a value
# Programs that run the commands on their input with sh, later (`-f FILE`: a script file).
_QUEUES = frozenset({"at", "batch"})
# Commands that add arguments of their own to the command they run.
_APPENDERS = frozenset({"xargs", "parallel"})

# git's own commands that never push (a push-like one is push, or one git does not know:
# an alias, or a typo that help.autocorrect would run as push).
_GIT_NOT_PUSH = frozenset({
    "add", "am", "annotate", "apply", "archive", "bisect", "blame", "branch", "bundle", "cat-file",
    "check-attr", "check-ignore", "check-ref-format", "checkout", "checkout-index", "cherry",
    "cherry-pick", "citool", "clean", "clone", "column", "commit", "commit-graph", "commit-tree",
    "config", "count-objects", "credential", "describe", "diff", "diff-files", "diff-index",
    "diff-tree", "difftool", "fast-export", "fast-import", "fetch", "fetch-pack", "filter-branch",
    "for-each-ref", "format-patch", "fsck", "gc", "grep", "gui", "hash-object", "help",
    "index-pack", "init", "instaweb", "interpret-trailers", "lfs", "log", "ls-files", "ls-remote",
    "ls-tree", "maintenance", "merge", "merge-base", "merge-file", "merge-tree", "mergetool",
    "mktag", "mktree", "mv", "name-rev", "notes", "pack-objects", "prune", "pull", "range-diff",
    "read-tree", "rebase", "reflog", "remote", "repack", "replace", "request-pull", "rerere",
    "reset", "restore", "rev-list", "rev-parse", "revert", "rm", "send-email", "shortlog", "show",
    "show-branch", "show-ref", "sparse-checkout", "stash", "status", "stripspace", "submodule",
    "switch", "symbolic-ref", "tag", "unpack-objects", "update-index", "update-ref", "var",
    "verify-commit", "verify-pack", "verify-tag", "version", "whatchanged", "worktree",
    "write-tree"
})  # fmt: skip
_GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace",
                                "--super-prefix", "--attr-source", "--config-env"})  # fmt: skip
_CONFIG_READS = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l",
                           "--list", "get", "list"})  # fmt: skip
_CONFIG_WRITES = frozenset({"--unset", "--unset-all", "--add", "--replace-all", "--edit",
                            "-e", "--rename-section", "--remove-section", "set", "unset",
                            "edit", "rename-section", "remove-section"})  # fmt: skip
_CONFIG_EDITS = frozenset({"--edit", "-e", "edit"})
# `git config` on a whole section (git 2.46 spells them as subcommands too; git has no
# copy): rename gives every key of OLD the name NEW.VARIABLE, remove takes OLD's away.
_SECTION_ACTIONS = {"--rename-section": "rename", "rename-section": "rename",
                    "--remove-section": "remove", "remove-section": "remove"}  # fmt: skip
_CONFIG_VALUES = frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment",
                            "--value", "--worktree-file"})  # fmt: skip

# A push is refused by the bypass tokens it carries; these are what bypass looks like
# anywhere in a line, for text the scan could not read.
_BYPASS_TEXTS = ("--no-ve", "hookspath", "git_config", "skip=", "failgate_", "git_dir=",
                 "include.path", "home=")  # fmt: skip


class Risk(enum.StrEnum):
    PUSH_BYPASS = "push-bypass"
    PUSH_UNREADABLE = "push-unreadable"
    HOOKS_CONFIG = "hooks-config"
    RELAXING = "relaxing-command"
    PROTECTED_WRITE = "protected-write"
    PROTECTED_UNREADABLE = "protected-unreadable"
    PROTECTED_RESTORE = "protected-restore"  # a git restore of paths that would change one
    PROTECTED_INDEX = "protected-index"  # a write of git's index that may set one apart


class Finding(NamedTuple):
    """One thing a command would do around the gate, and what exactly, for the message."""

    risk: Risk
    detail: str


class Unread(NamedTuple):
    """A command line with a part the scan could not read, and the first such part."""

    text: str  # the whole line: judged by the protected names it holds, as inline code is
    why: str


class CommandScan(NamedTuple):
    findings: tuple[Finding, ...] = ()
    writes: tuple[WriteTarget, ...] = ()
    code: tuple[str, ...] = ()  # inline code for an interpreter: judged by the names it holds
    unread: Unread | None = None


def squashed(text: str) -> str:
    """The text without quotes, escapes or line continuations, lower case: for needles."""
    return _SQUASH.sub("", text).lower()


def mentions_push(text: str) -> bool:
    return "push" in squashed(text)


def holds_bypass(flat: str) -> bool:
    return any(text in flat for text in _BYPASS_TEXTS)


def needs_reading(flat: str) -> bool:
    """Whether a needle is there: substring tests first, each a single pass in C."""
    if any(needle in flat for needle in _NEEDLE_TEXTS):
        return True
    return any(
        word in flat and re.search(rf"(?<![a-z0-9_]){word}(?![a-z_])", flat) is not None
        for word in _NEEDLE_WORDS
    )


def relaxing_record(args: list[str]) -> bool:
    for index, arg in enumerate(args):
        if arg.startswith(("--supersedes", "--retracts", "--status=expired")):
            return True
        if arg == "--status" and args[index + 1 : index + 2] == ["expired"]:
            return True
    return False


def basename(text: str) -> str:
    """A command's name as the system finds it: `/usr/bin/Git.exe` is git where case is folded."""
    return text.rsplit("/", 1)[-1].lower().removesuffix(".exe")
