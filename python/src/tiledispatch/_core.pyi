# Type stubs of the C extension tiledispatch._core.
import os
from typing import Any, Iterable, Literal, Mapping, Sequence, Union, final

_Path = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
_Lang = Literal["cuda", "tirx"]

__version__: str
library_version: str

class Error(Exception): ...

class InputError(Error, ValueError):
    path: str | None
    line: int | None
    column: int | None
    message: str | None
    source_line: str | None
    code: str

@final
class PredicateOutcome(tuple[str, bool, str]):
    __match_args__ = ("name", "ok", "reason")
    @property
    def name(self) -> str: ...
    @property
    def ok(self) -> bool: ...
    @property
    def reason(self) -> str: ...
    @property
    def args(self) -> str: ...
    @property
    def shown(self) -> str: ...
    n_fields: int
    n_sequence_fields: int
    n_unnamed_fields: int

@final
class ExplainRow(tuple[str, int, str, tuple[str, ...]]):
    __match_args__ = ("variant", "priority", "status", "reasons")
    @property
    def variant(self) -> str: ...
    @property
    def priority(self) -> int: ...
    @property
    def status(self) -> Literal[
        "selected", "rejected", "declined", "failed", "not_tried", "disabled"
    ]: ...
    @property
    def reasons(self) -> tuple[str, ...]: ...
    @property
    def predicates(self) -> tuple[PredicateOutcome, ...]: ...
    @property
    def message(self) -> str: ...
    n_fields: int
    n_sequence_fields: int
    n_unnamed_fields: int

@final
class Rule(tuple[str, str, str, str | None, int, bool, tuple[tuple[str, str], ...], str | None, int]):
    __match_args__ = ("op", "target", "name", "impl", "priority", "enabled",
                      "predicates", "file", "line")
    @property
    def op(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def impl(self) -> str | None: ...
    @property
    def priority(self) -> int: ...
    @property
    def enabled(self) -> bool: ...
    @property
    def predicates(self) -> tuple[tuple[str, str], ...]: ...
    @property
    def file(self) -> str | None: ...
    @property
    def line(self) -> int: ...
    n_fields: int
    n_sequence_fields: int
    n_unnamed_fields: int

class DispatchError(Error):
    rows: list[ExplainRow]
    text: str
    reason: str | None
    call: Call

@final
class Call:
    def __new__(
        cls,
        *,
        op: str,
        buffers: Mapping[str, Mapping[str, Any]],
        dst: str,
        src: str | None = ...,
        srcs: Sequence[str | float | Mapping[str, Any]] | None = ...,
        extras: Mapping[str, str | float | Mapping[str, Any]] | None = ...,
        target: str | None = ...,
        arch: str | None = ...,
        scope: str | None = ...,
        launch: Mapping[str, int | str | Sequence[int]] | None = ...,
        axes: Sequence[int] | None = ...,
        accum: bool | str | None = ...,
        config: Mapping[str, int | bool | str] | None = ...,
        dispatch: str | None = ...,
        scalars: Mapping[str, Mapping[str, Any]] | None = ...,
        a: str | None = ...,
        b: str | None = ...,
        c: str | None = ...,
        transpose_A: bool | None = ...,
        transpose_B: bool | None = ...,
        alpha: float | None = ...,
        beta: float | None = ...,
        active: Mapping[str, Sequence[int]] | None = ...,
        transA: bool | None = ...,
        transB: bool | None = ...,
        sfa: str | None = ...,
        sfb: str | None = ...,
    ) -> Call: ...
    @classmethod
    def from_yaml(cls, path: _Path, /) -> Call: ...
    @classmethod
    def from_text(cls, text: str | bytes, name: str = "<text>") -> Call: ...
    def with_arch(self, arch: str, /) -> Call: ...
    @property
    def op(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def arch(self) -> str | None: ...
    @property
    def sm_version(self) -> int | None: ...
    @property
    def scope(self) -> str: ...
    @property
    def launch(self) -> dict[str, int | str | list[int]]: ...
    @property
    def active(self) -> dict[str, list[int]]: ...
    @property
    def buffers(self) -> dict[str, dict[str, Any]]: ...
    @property
    def dst(self) -> str | None: ...
    @property
    def src(self) -> str | None: ...
    @property
    def srcs(self) -> tuple[str | dict[str, Any], ...]: ...
    @property
    def extras(self) -> dict[str, str | dict[str, Any]]: ...
    @property
    def axes(self) -> tuple[int, ...]: ...
    @property
    def accum(self) -> bool | str: ...
    @property
    def config(self) -> dict[str, int | bool | str]: ...
    @property
    def dispatch(self) -> str | None: ...
    @property
    def file(self) -> str | None: ...
    @property
    def script(self) -> str: ...

@final
class Dispatch:
    @property
    def variant(self) -> str: ...
    @property
    def impl(self) -> str | None: ...
    @property
    def priority(self) -> int: ...
    @property
    def call(self) -> Call: ...
    @property
    def registry(self) -> Registry: ...
    def emit(self, lang: _Lang = "cuda", *, indent: int = 0, prelude: bool = True) -> str: ...
    def emit_parts(self, lang: _Lang = "cuda", *, indent: int = 0) -> tuple[str, str]: ...

@final
class Registry:
    def __new__(
        cls,
        rules: Iterable[_Path] | None = None,
        plugins: Iterable[_Path] | None = None,
        *,
        default_rules: bool = True,
        environment: bool = True,
    ) -> Registry: ...
    def dispatch(self, call: Call, /) -> Dispatch: ...
    def select(self, call: Call, /) -> str: ...
    def explain(self, call: Call, /) -> list[ExplainRow]: ...
    def explain_text(self, call: Call, format: Literal["text", "json", "tvm"] = "text") -> str: ...
    def rules(self) -> list[Rule]: ...
    def has_op(self, name: str, /) -> bool: ...
    def listing(
        self,
        what: Literal["rules", "predicates", "impls"] = "rules",
        format: Literal["text", "json"] = "text",
    ) -> str: ...

def default_rules() -> str: ...
