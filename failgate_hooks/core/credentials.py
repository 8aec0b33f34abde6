"""Credential-shaped text: versioned detection rules; pure.

The ledger is never a credential store: `record`, `confirm` and `expire`
refuse text that a rule matches, and `fsck` reports a committed match so that
it can be retracted. A finding names the rule, the rules version and where the
match lies, never the matched text: a report must not repeat the secret.

Bump RULES_VERSION whenever a rule changes what it matches, so that a report
can say which rules judged a file. v2 added cloud (Azure, GCP) and more token
formats, credentials in URLs and Authorization headers, and `passphrase`.

Every pattern runs in time linear in the text, hostile input included: `fsck`
scans whatever was pushed. A span that runs to a closing marker (a private
key's END line) is found by a second search bounded by the next opening one,
never by a lazy `.*?` that would rescan the rest of the text for each opening.
"""

from __future__ import annotations

import re
from typing import NamedTuple

RULES_VERSION = 2


class Rule(NamedTuple):
    """One kind of credential: its stable name and the pattern that finds it."""

    name: str
    pattern: re.Pattern[str]
    # A match's span runs on to the first match of `end` before the pattern's next
    # match, when there is one (a key block's END line).
    end: re.Pattern[str] | None = None


class Finding(NamedTuple):
    """Where a rule matched: offsets into the scanned text, never the text itself."""

    rule: str
    rules_version: int
    start: int
    end: int


# Names under which people assign secrets, matched at the end of a longer name
# too (`db_password`, `GITHUB_TOKEN`, `client_secret`).
_SECRET_NAMES = (
    r"password|passwd|passphrase|pwd|secret(?:[_-]?key)?|token"
    r"|api[_-]?key|access[_-]?key|private[_-]?key|account[_-]?key"
)
# A closing quote of a quoted name, then `=`, `:` or `=>`, then an opening quote.
_ASSIGN = r"""["']?[ \t]*(?::|=>?)[ \t]*["']?"""
_PRIVATE_KEY_LABEL = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?"

RULES: tuple[Rule, ...] = (
    Rule(
        "private-key-block",
        re.compile(rf"-----BEGIN {_PRIVATE_KEY_LABEL}-----"),
        # The span runs to the END line when there is one, so that it covers the key.
        end=re.compile(rf"-----END {_PRIVATE_KEY_LABEL}-----"),
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
    Rule(
        "gcp-service-account",
        # A service-account key file: its private_key is a PEM block written with \n
        # escapes; its key id, type and client e-mail give it away even when cut.
        re.compile(
            r'"type"\s*:\s*"service_account"'
            r'|"private_key_id"\s*:\s*"[0-9a-f]{40}"'
            r'|"private_key"\s*:\s*"-----BEGIN'
        ),
    ),
    Rule("gcp-oauth-client-secret", re.compile(r"(?<![A-Za-z0-9_-])GOCSPX-[A-Za-z0-9_-]{28}")),
    Rule("google-oauth-token", re.compile(r"(?<![A-Za-z0-9_-])ya29\.[A-Za-z0-9_-]{20,}")),
    Rule(
        "azure-storage-key",
        re.compile(
            r"(?i:AccountKey)\s*=\s*[A-Za-z0-9+/]{86}==|(?i:SharedAccessKey)=[A-Za-z0-9+/]{43}="
        ),
    ),
    Rule(
        "azure-sas-token",
        # Bounded: a lazy \S*? would rescan the rest for every `sv=` in a long run.
        re.compile(r"(?<![A-Za-z0-9])sv=\d{4}-\d{2}-\d{2}&\S{0,400}?\bsig=[A-Za-z0-9%/+=]{30,}"),
    ),
    Rule(
        "azure-client-secret",
        re.compile(
            r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])"
        ),
    ),
    Rule(
        "slack-webhook",
        re.compile(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,}"),
    ),
    Rule(
        "openai-key",
        re.compile(
            r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}T3BlbkFJ[A-Za-z0-9_-]{16,}"
        ),
    ),
    Rule("anthropic-key", re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[a-z]+\d{2}-[A-Za-z0-9_-]{40,}")),
    Rule("huggingface-token", re.compile(r"(?<![A-Za-z0-9_])hf_[A-Za-z]{34}(?![A-Za-z0-9])")),
    Rule(
        "sendgrid-key",
        re.compile(r"(?<![A-Za-z0-9_-])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
    ),
    Rule("twilio-key", re.compile(r"(?<![A-Za-z0-9])SK[0-9a-f]{32}(?![A-Za-z0-9])")),
    Rule(
        "service-token",
        # Prefixed tokens of common services: Docker Hub, DigitalOcean, Shopify,
        # Databricks, GitLab deploy/runner, Doppler, Linear, Postman, Grafana.
        re.compile(
            r"(?<![A-Za-z0-9_-])(?:dckr_pat_[A-Za-z0-9_-]{27,}|do[opr]_v1_[a-f0-9]{64}"
            r"|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|dapi[a-f0-9]{32}|gl(?:dt|rt|ptt|ft)-[A-Za-z0-9_-]{20,}"
            r"|dp\.(?:st|ct|sa|scim)\.[A-Za-z0-9_-]{40,}|lin_api_[A-Za-z0-9]{40}"
            r"|PMAK-[a-f0-9]{24}-[a-f0-9]{34}|glsa_[A-Za-z0-9]{32}_[a-f0-9]{8})"
        ),
    ),
    Rule(
        "url-credentials",
        # scheme://user:password@host: the password is the secret.
        re.compile(
            r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,20}://(?P<name>[^\s:/@?#\"'`]+)"
            r":(?P<value>[^\s/@?#\"'`]{3,})@[A-Za-z0-9.-]"
        ),
    ),
    Rule(
        "authorization-header",
        re.compile(
            r"(?i:authorization|proxy-authorization)[\"']?[ \t]*[:=][ \t]*[\"']?"
            r"(?i:bearer|basic|token|digest)[ \t]+(?P<value>[A-Za-z0-9._~+/=-]{16,})"
        ),
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
        matches = list(rule.pattern.finditer(text))
        for i, found in enumerate(matches):
            groups = found.groupdict()
            value = groups.get("value")
            name = groups.get("name") or ""
            if value is not None and _is_placeholder(name, value):
                continue
            end = found.end()
            if rule.end is not None:
                # Bounded by the next opening: each stretch of text is searched once.
                limit = matches[i + 1].start() if i + 1 < len(matches) else len(text)
                closing = rule.end.search(text, end, limit)
                end = closing.end() if closing is not None else end
            finding = Finding(rule.name, RULES_VERSION, found.start(), end)
            (generic if rule.name == _GENERIC_RULE else specific).append(finding)
    kept = specific + [finding for finding in generic if not _overlaps(finding, specific)]
    return sorted(kept, key=lambda finding: (finding.start, finding.end, finding.rule))


def describe(finding: Finding) -> str:
    """A one-line account of `finding` that never includes the matched text."""
    return f"credential-shaped text (rule {finding.rule}, rules v{finding.rules_version})"


def redact(text: str) -> str:
    """`text` with every credential-shaped span replaced by the rule that found it."""
    out, pos = [], 0
    for finding in find_credentials(text):
        if finding.start < pos:
            continue  # inside a span already replaced
        out.append(text[pos : finding.start])
        out.append(f"[redacted: {finding.rule}, rules v{finding.rules_version}]")
        pos = finding.end
    out.append(text[pos:])
    return "".join(out)
