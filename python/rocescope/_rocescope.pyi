"""Types of the extension module behind `rocescope` (python/src/lib.rs)."""

from typing import Any, Callable, Optional

VERSION: str
FRAME_COLUMNS: list[str]

class NativeFailure(Exception):
    """A command's failure: args are (kind, message), kind one of capture, usage, output."""

class ArrowStream:
    """Record batches, taken once through the Arrow PyCapsule interface."""
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object: ...

class NativeReport:
    def json(self) -> str: ...
    def summary(self) -> str: ...
    def html(self) -> str: ...
    def tables(self) -> list[tuple[str, ArrowStream]]: ...

def packets(
    args: list[str], fields: list[str], progress: Optional[Callable[[int, Optional[int]], Any]] = None
) -> tuple[ArrowStream, list[str]]: ...
def analyze(
    args: list[str], progress: Optional[Callable[[int, Optional[int]], Any]] = None
) -> tuple[NativeReport, list[str]]: ...
def field_registry() -> list[tuple[str, str, str, str, str, str]]: ...
