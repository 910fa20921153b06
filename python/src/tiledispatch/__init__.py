"""tiledispatch: decides how a GPU tile primitive is lowered and writes the
code for it, from Python.

    import tiledispatch as td

    reg = td.Registry()                       # the built-in rules
    call = td.Call.from_yaml("call.yaml")     # or Call.from_text / Call(op=...)
    d = reg.dispatch(call)                    # d.variant == "local"
    print(d.emit("cuda"))                     # or d.emit("tirx")
    for variant, priority, status, reasons in reg.explain(call):
        ...

No variant matching raises DispatchError (``.rows`` is the table, ``str()``
the command line's text); a bad call or rules file raises InputError
(``.path``, ``.line``, ``.column``).  Registries, calls and dispatch results
are immutable and may be shared between threads; the GIL is released while
the C library works.

``upstream_rules_path()`` is the overlay ``rules/upstream.yaml`` the wheel
carries (``Registry(rules=[td.upstream_rules_path()])`` dispatches as
TVM 0.27 does, like ``tiledispatch --rules rules/upstream.yaml``).

The package is a C extension (``tiledispatch._core``) over the static
library; see docs/python.md in the source tree.
"""

from pathlib import Path as _Path

from ._core import (
    Call,
    Dispatch,
    DispatchError,
    Error,
    ExplainRow,
    InputError,
    PredicateOutcome,
    Registry,
    Rule,
    __version__,
    default_rules,
    library_version,
)

__all__ = [
    "Call",
    "Dispatch",
    "DispatchError",
    "Error",
    "ExplainRow",
    "InputError",
    "PredicateOutcome",
    "Registry",
    "Rule",
    "__version__",
    "default_rules",
    "library_version",
    "upstream_rules_path",
]


def upstream_rules_path() -> str:
    """The path of the overlay ``upstream.yaml`` installed with the package:
    a rules layer that turns off the variants TVM 0.27 has no counterpart
    for, so that every call goes where TVM's own dispatcher sends it.  Pass
    it as ``Registry(rules=[upstream_rules_path()])`` (the command line's
    ``--rules rules/upstream.yaml``) or put it in ``TILEDISPATCH_RULES``."""
    return str(_Path(__file__).resolve().parent / "upstream.yaml")
