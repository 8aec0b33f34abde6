"""Verifier: tomli reads lower case "t" and "z" in an offset date-time, as RFC 3339 allows.

Runs in a clean checkout of a commit of tests/data/tomli.bundle (its root holds
`tomli/`). Exit 0: fixed; 1: the bug of tomli 1.2.2; 125: no verdict, because
the checkout's own tomli could not be imported.
"""

import datetime
import os
import sys

NO_VERDICT = 125  # as `git bisect run`'s "skip"

checkout = os.getcwd()
# The checkout's tomli, never an installed one: that would judge other code.
sys.path.insert(0, checkout)
try:
    import tomli
except Exception as exc:
    print(f"cannot import tomli from the checkout: {exc!r}")
    sys.exit(NO_VERDICT)
if not os.path.abspath(tomli.__file__).startswith(os.path.join(checkout, "")):
    print(f"imported tomli from {tomli.__file__}, not from the checkout")
    sys.exit(NO_VERDICT)

DOCUMENT = "odt = 1979-05-27t07:32:00z\n"
WANTED = datetime.datetime(1979, 5, 27, 7, 32, tzinfo=datetime.timezone(datetime.timedelta(0)))

try:
    got = tomli.loads(DOCUMENT)["odt"]
except tomli.TOMLDecodeError as exc:
    print(f"tomli {tomli.__version__} rejects {DOCUMENT.strip()!r}: {exc}")
    sys.exit(1)
if got != WANTED:
    print(f"tomli {tomli.__version__} reads {DOCUMENT.strip()!r} as {got!r}, not {WANTED!r}")
    sys.exit(1)
print(f"tomli {tomli.__version__} reads lower case t and z: {got.isoformat()}")
