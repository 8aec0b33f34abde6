"""Configuration: `[tool.failgate]` in pyproject.toml, or failgate.toml.

Always read from committed bytes of a chosen revision, never from the working
tree: a pushed commit must not be able to move the ledger, switch to warn mode,
or change who may relax a gate.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from typing import Any, NamedTuple

from failgate_hooks.core.errors import UsageError
from failgate_hooks.core.events import DEFAULT_TIMEOUT_S, is_safe_relative_path
from failgate_hooks.core.pusher_env import is_pusher_controlled
from failgate_hooks.core.refnames import ref_pattern_problem
from failgate_hooks.core.sanitize import clip
from failgate_hooks.core.validate import timeout_problem

CONFIG_FILES = ("failgate.toml", "pyproject.toml")
# An event is a few hundred bytes: a file of megabytes is an attack on every later
# push that reads it, and validating it would cost them all.
MAX_EVENT_BYTES = 64 * 1024
# The most a configuration may raise it to.
MAX_EVENT_BYTES_LIMIT = 16 * 1024 * 1024
# A configuration file, or the signers file it names, is read whole from a pushed
# commit: larger than any real one, small enough that a push cannot fill memory.
MAX_CONFIG_BYTES = 1024 * 1024
# `**` crosses `/`: refs/tags/prod/v1 and refs/heads/release/2.0/hotfix are shipped refs too.
DEFAULT_PROTECTED_REFS = (
    "refs/heads/main",
    "refs/heads/master",
    "refs/heads/release/**",
    "refs/tags/**",
)
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class Config(NamedTuple):
    ledger: str = "ledger"
    protected_refs: tuple[str, ...] = DEFAULT_PROTECTED_REFS
    block_on: str = "protected"
    mode: str = "enforce"
    default_timeout_s: int = DEFAULT_TIMEOUT_S
    ledger_refs: tuple[str, ...] = ()
    relaxers: tuple[str, ...] = ()
    identity_env: str | None = None
    sandbox: str = "none"  # "bwrap": every verifier runs in bubblewrap
    sandbox_network: bool = False
    max_event_bytes: int = MAX_EVENT_BYTES  # a larger event file is invalid
    # An OpenSSH allowed-signers file in the repository: who may attest (docs/evidence.md).
    evidence_signers: str | None = None
    require_evidence: bool | None = None  # None: on when evidence_signers is set
    source: str = "defaults"  # where it was read from, for messages

    @property
    def requires_evidence(self) -> bool:
        """Whether the server holds an open gate on a protected ref that no evidence covers."""
        if self.require_evidence is None:
            return self.evidence_signers is not None
        return self.require_evidence


def parse_config(files: Mapping[str, bytes], source: str) -> Config:
    """The configuration from the bytes of `failgate.toml` / `pyproject.toml`.

    failgate.toml wins when both exist; a file without failgate settings means
    defaults; an invalid value is a usage error naming the file and the key.
    """
    for name in CONFIG_FILES:
        if name not in files:
            continue
        where = f"{name} ({source})"
        doc = _parse_toml(files[name], where)
        if name == "pyproject.toml":
            tools = doc.get("tool", {})
            if not isinstance(tools, dict):
                raise UsageError(f"{where}: tool must be a table")
            table = tools.get("failgate")
            if table is None:
                continue
            prefix = "tool.failgate."
        else:
            table, prefix = doc, ""
        if not isinstance(table, dict):
            raise UsageError(f"{where}: {prefix or 'the file'} must be a table")
        return _from_table(table, where, prefix, source)
    return Config(source=source)


# How much of one pushed value a message quotes.
SHOWN_LIMIT = 200


def _from_table(table: Mapping[str, Any], where: str, prefix: str, source: str) -> Config:
    known = set(Config._fields) - {"source"}
    unknown = [str(key) for key in table if key not in known]
    if unknown:
        raise UsageError(_unknown_keys_message(unknown, sorted(known), where, prefix))

    def text(key: str, default: str, choices: tuple[str, ...] | None = None) -> str:
        value = table.get(key, default)
        if not isinstance(value, str) or (choices and value not in choices):
            expected = " or ".join(f'"{c}"' for c in choices) if choices else "a string"
            raise UsageError(f"{where}: {prefix}{key} must be {expected}, got {_shown(value)}")
        return value

    def strings(key: str, default: tuple[str, ...]) -> tuple[str, ...]:
        value = table.get(key, list(default))
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise UsageError(
                f"{where}: {prefix}{key} must be a list of strings, got {_shown(value)}"
            )
        return tuple(value)

    def ref_names(key: str, default: tuple[str, ...]) -> tuple[str, ...]:
        names = strings(key, default)
        for i, name in enumerate(names):
            problem = ref_pattern_problem(name)
            if problem is not None:
                raise UsageError(f"{where}: {prefix}{key}[{i}]: {problem}")
        return names

    ledger = text("ledger", "ledger")
    if not is_safe_relative_path(ledger):
        raise UsageError(f"{where}: {prefix}ledger must be a relative folder, got {_shown(ledger)}")
    timeout = table.get("default_timeout_s", DEFAULT_TIMEOUT_S)
    problem = timeout_problem(timeout)
    if problem is not None:
        raise UsageError(f"{where}: {prefix}default_timeout_s: {problem}")
    max_event_bytes = table.get("max_event_bytes", MAX_EVENT_BYTES)
    if (
        not isinstance(max_event_bytes, int)
        or isinstance(max_event_bytes, bool)
        or not 1024 <= max_event_bytes <= MAX_EVENT_BYTES_LIMIT
    ):
        raise UsageError(
            f"{where}: {prefix}max_event_bytes must be a whole number of bytes from 1024 to "
            f"{MAX_EVENT_BYTES_LIMIT}, got {_shown(max_event_bytes)}"
        )
    sandbox_network = table.get("sandbox_network", False)
    if not isinstance(sandbox_network, bool):
        raise UsageError(f"{where}: {prefix}sandbox_network must be true or false")
    evidence_signers = table.get("evidence_signers")
    if evidence_signers is not None and (
        not isinstance(evidence_signers, str) or not is_safe_relative_path(evidence_signers)
    ):
        raise UsageError(
            f"{where}: {prefix}evidence_signers must be the path of a file in the repository, "
            f"got {_shown(evidence_signers)}"
        )
    require_evidence = table.get("require_evidence")
    if require_evidence is not None and not isinstance(require_evidence, bool):
        raise UsageError(f"{where}: {prefix}require_evidence must be true or false")
    identity_env = table.get("identity_env")
    if identity_env is not None:
        if not isinstance(identity_env, str) or not _VARIABLE_NAME.match(identity_env):
            raise UsageError(f"{where}: {prefix}identity_env must be a variable name")
        # An identity read from a variable the pusher sets is whatever the pusher says.
        if is_pusher_controlled(identity_env):
            raise UsageError(
                f"{where}: {prefix}identity_env = {_shown(identity_env)} is a variable the "
                "pusher can set, so it cannot say who pushes; name the one your git server sets "
                "(e.g. GL_USERNAME on GitLab, REMOTE_USER behind a web server)"
            )
    return Config(
        ledger=ledger,
        protected_refs=ref_names("protected_refs", DEFAULT_PROTECTED_REFS),
        block_on=text("block_on", "protected", ("protected", "all")),
        mode=text("mode", "enforce", ("enforce", "warn")),
        default_timeout_s=timeout,
        ledger_refs=ref_names("ledger_refs", ()),
        relaxers=strings("relaxers", ()),
        identity_env=identity_env,
        sandbox=text("sandbox", "none", ("none", "bwrap")),
        sandbox_network=sandbox_network,
        max_event_bytes=max_event_bytes,
        evidence_signers=evidence_signers,
        require_evidence=require_evidence,
        source=source,
    )


# How many unknown keys one message names; a pushed file may hold thousands.
SHOWN_KEYS = 5


def _unknown_keys_message(unknown: list[str], known: list[str], where: str, prefix: str) -> str:
    """Every unknown key in one message (bounded), with a hint when failgate.toml holds
    a `[tool.failgate]` table copied from pyproject.toml."""
    names = ", ".join(f"{prefix}{clip(key, SHOWN_LIMIT)}" for key in unknown[:SHOWN_KEYS])
    if len(unknown) > SHOWN_KEYS:
        names += f" and {len(unknown) - SHOWN_KEYS} more"
    plural = "s" if len(unknown) > 1 else ""
    message = f"{where}: unknown key{plural} {names}; expected one of {', '.join(known)}"
    if not prefix and "tool" in unknown:
        message += "; failgate.toml takes the keys at top level: move them out of [tool.failgate]"
    return message


def _parse_toml(raw: bytes, where: str) -> dict[str, Any]:
    """The TOML document in `raw`, or a usage error naming the file."""
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError, TOMLDecodeError too
        raise UsageError(f"{where}: not valid TOML: {exc}") from None


def strictest(config: Config, other: Config) -> Config:
    """`config` (the one in force) never laxer than `other` (the default branch's) in
    what it enforces: the refs either protects, enforce and block_on "all" and the
    sandbox and evidence if either asks for them. A ref's tip that predates a rule the
    default branch added later (a newly protected ref, require_evidence) must not keep
    that ref out of it. Who may relax is asked of both apart (their identity_env may
    differ); the ledger and everything else stay `config`'s."""
    if config == other._replace(source=config.source):
        return config
    refs = (
        *config.protected_refs,
        *(r for r in other.protected_refs if r not in config.protected_refs),
    )
    evidence = config.requires_evidence or other.requires_evidence
    return config._replace(
        protected_refs=refs,
        mode="enforce" if "enforce" in (config.mode, other.mode) else config.mode,
        block_on="all" if "all" in (config.block_on, other.block_on) else config.block_on,
        sandbox="bwrap" if "bwrap" in (config.sandbox, other.sandbox) else config.sandbox,
        sandbox_network=config.sandbox_network and other.sandbox_network,
        max_event_bytes=min(config.max_event_bytes, other.max_event_bytes),
        evidence_signers=config.evidence_signers or other.evidence_signers,
        require_evidence=evidence,
        source=f"{config.source}, no laxer than {other.source}",
    )


def loosened(before: Config, after: Config) -> list[str]:
    """How `after` loosens enforcement or authority compared with `before`, key by key.

    Effective values are compared, never file bytes: an edit elsewhere in
    pyproject.toml changes nothing, and an added failgate.toml that overrides the
    pyproject.toml table is judged by what it makes the configuration."""
    changes = []
    if before.mode == "enforce" and after.mode == "warn":
        changes.append('mode "enforce" -> "warn"')
    if after.max_event_bytes > before.max_event_bytes:
        changes.append(f"max_event_bytes {before.max_event_bytes} -> {after.max_event_bytes}")
    if before.block_on == "all" and after.block_on == "protected":
        changes.append('block_on "all" -> "protected"')
    removed = [ref for ref in before.protected_refs if ref not in after.protected_refs]
    if removed:
        changes.append(f"protected_refs no longer protects {', '.join(removed)}")
    added = [name for name in after.relaxers if name not in before.relaxers]
    if added:
        changes.append(f"relaxers adds {', '.join(added)}")
    if before.sandbox == "bwrap" and after.sandbox == "none":
        changes.append('sandbox "bwrap" -> "none"')
    if not before.sandbox_network and after.sandbox_network:
        changes.append("sandbox_network false -> true")
    if before.requires_evidence and not after.requires_evidence:
        changes.append("require_evidence true -> false")
    # Another file may list other signers: any change of it is one.
    for key in ("identity_env", "ledger", "ledger_refs", "evidence_signers"):
        if getattr(before, key) != getattr(after, key):
            changes.append(f"{key} {_shown(getattr(before, key))} -> {_shown(getattr(after, key))}")
    return changes


def _shown(value: object) -> str:
    """A pushed value in a message, bounded where it is written: a string of a whole
    megabyte must not become a message of one."""
    return clip(repr(value), SHOWN_LIMIT)
