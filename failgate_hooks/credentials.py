"""Credential-shaped text: versioned detection rules (DESIGN §10); pure.

The ledger is never a credential store: `record`, `confirm` and `expire`
refuse text that a rule matches, and `fsck` reports a committed match so that
it can be retracted. A finding names the rule, the rules version and where the
match lies, never the matched text: a report must not repeat the secret.

Bump RULES_VERSION whenever a rule changes what it matches, so that a report
can say which rules judged a file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

RULES_VERSION = 1


@dataclass(frozen=True)
class Rule:
    """One kind of credential: its stable name and the pattern that finds it."""

    name: str
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class Finding:
    """Where a rule matched: offsets into the scanned text, never the text itself."""

    rule: str
    rules_version: int
    start: int
    end: int


# Names under which people assign secrets, matched at the end of a longer name
# too (`db_password`, `GITHUB_TOKEN`, `client_secret`).
_SECRET_NAMES = (
    r"password|passwd|pwd|secret(?:[_-]?key)?|token"
    r"|api[_-]?key|access[_-]?key|private[_-]?key"
)
# A closing quote of a quoted name, then `=`, `:` or `=>`, then an opening quote.
_ASSIGN = r"""["']?[ \t]*(?::|=>?)[ \t]*["']?"""
_PRIVATE_KEY_LABEL = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?"

RULES: tuple[Rule, ...] = (
    Rule(
        "private-key-block",
        # The span runs to the END line when there is one, so that it covers the key.
        re.compile(
            rf"-----BEGIN {_PRIVATE_KEY_LABEL}-----(?:.*?-----END {_PRIVATE_KEY_LABEL}-----)?",
            re.DOTALL,
        ),
    ),
    Rule(
        "aws-access-key-id",
        re.compile(
            r"(?<![A-Za-z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)"
            r"[A-Z0-9]{16}(?![A-Za-z0-9])"
        ),
    ),
    Rule(
        "aws-secret-access-key",
        re.compile(
            r"(?i:aws[_-]?secret(?:[_-]?access)?[_-]?key)"
            + _ASSIGN
            + r"[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])"
        ),
    ),
    Rule(
        "github-token",
        re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
    ),
    Rule("gitlab-token", re.compile(r"(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}")),
    Rule("slack-token", re.compile(r"(?<![A-Za-z0-9])xox[baprs]-[A-Za-z0-9-]{10,}")),
    Rule(
        "google-api-key",
        re.compile(r"(?<![A-Za-z0-9_-])AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])"),
    ),
    Rule("stripe-key", re.compile(r"(?<![A-Za-z0-9_])(?:sk|rk)_live_[A-Za-z0-9]{24,}")),
    Rule(
        "jwt",
        # An empty signature (alg "none") still carries the claims.
        re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"),
    ),
    Rule("npm-token", re.compile(r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36,}")),
    Rule("pypi-token", re.compile(r"(?<![A-Za-z0-9_-])pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}")),
    Rule(
        "secret-assignment",
        re.compile(
            rf"(?<![A-Za-z0-9])(?i:(?P<name>{_SECRET_NAMES})){_ASSIGN}(?P<value>[^\s\"'`]{{6,}})"
        ),
    ),
)

# The generic rule is the least precise: when a specific rule covers the same
# text (`token = ghp_...`), the specific finding alone says more.
_GENERIC_RULE = "secret-assignment"

# Values that stand for a secret without being one. Anything else, weak or not
# (`changeme`), is flagged: a weak password in the ledger is still a password.
_PLACEHOLDER = re.compile(
    "|".join(
        [
            r"[*xX.•…#_-]+",  # ******, xxxxxx, ......
            r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*",  # ${VAR}, $VAR
            r"%\([A-Za-z0-9_]+\)[sr]|\{\{.*\}\}|\{[A-Za-z0-9_.]*\}",  # %(x)s, {{ x }}, {x}
            r"<[^<>]*>",  # <redacted>, <your-token-here>
            r"(?i:[\[(]?(?:redacted|hidden|undefined)[\])]?)",
        ]
    )
)


def _is_placeholder(name: str, value: str) -> bool:
    """Whether an assigned `value` obviously stands in for a secret rather than being one."""
    if _PLACEHOLDER.fullmatch(value.rstrip(",;")):
        return True
    # `PWD=/home/...` in an environment dump is the shell's working directory.
    return name.lower() == "pwd" and value.startswith(("/", "~"))


def _overlaps(finding: Finding, others: list[Finding]) -> bool:
    """Whether `finding` shares any character with one of `others`."""
    return any(finding.start < other.end and other.start < finding.end for other in others)


def find_credentials(text: str) -> list[Finding]:
    """Every credential-shaped span of `text`, in order of position."""
    specific: list[Finding] = []
    generic: list[Finding] = []
    for rule in RULES:
        for found in rule.pattern.finditer(text):
            groups = found.groupdict()
            value = groups.get("value")
            if value is not None and _is_placeholder(groups.get("name") or "", value):
                continue
            finding = Finding(rule.name, RULES_VERSION, found.start(), found.end())
            (generic if rule.name == _GENERIC_RULE else specific).append(finding)
    kept = specific + [finding for finding in generic if not _overlaps(finding, specific)]
    return sorted(kept, key=lambda finding: (finding.start, finding.end, finding.rule))


def describe(finding: Finding) -> str:
    """A one-line account of `finding` that never includes the matched text."""
    return f"credential-shaped text (rule {finding.rule}, rules v{finding.rules_version})"
