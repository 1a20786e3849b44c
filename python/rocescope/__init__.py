"""rocescope for notebooks: RoCEv2 and UET captures as polars DataFrames.

    import rocescope
    frames = rocescope.packets("capture.pcap", filter="infiniband.bth.opcode == 10")
    report = rocescope.analyze("capture.pcap", link_speed="100G")
    report.findings, report.flows, report.to_dict()

Every call reads and analyses as the ``rocescope`` command does (the same engine, compiled
into this module), with the GIL released while it runs. Its errors are the command's, as
exceptions: :class:`CaptureError` where the command exits with status 1, :class:`FilterError`
and :class:`OptionError` (both :class:`ValueError`) where it exits with 2, :class:`OutputError`
with 3. What the command prints as a warning (a damaged file, read up to the damage) is a
:class:`RocescopeWarning`, and the call returns what was read.
"""

from __future__ import annotations

import os
import re
import warnings
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

import polars as pl

from . import _rocescope

__all__ = [
    "packets",
    "analyze",
    "fields",
    "Report",
    "RocescopeError",
    "CaptureError",
    "UsageError",
    "FilterError",
    "OptionError",
    "OutputError",
    "RocescopeWarning",
    "DEFAULT_FIELDS",
]

__version__ = _rocescope.VERSION

PathLike = Union[str, "os.PathLike[str]"]
Progress = Callable[[int, Optional[int]], Any]


class RocescopeError(Exception):
    """An error of rocescope's; ``status`` is the command's exit status for it."""

    status = 0


class CaptureError(RocescopeError):
    """No input could be read: missing, unreadable, not a capture, or damaged before its first
    frame (the command's exit status 1)."""

    status = 1


class UsageError(RocescopeError, ValueError):
    """An argument rocescope refuses (the command's exit status 2)."""

    status = 2


class FilterError(UsageError):
    """A display filter that does not compile."""


class OptionError(UsageError):
    """An option rocescope does not know, or a value it refuses."""


class OutputError(RocescopeError):
    """An output that could not be written (the command's exit status 3)."""

    status = 3


class RocescopeWarning(UserWarning):
    """What the command prints as a warning: a damaged file (read up to the damage), an input
    that could not be read while others could, frames of a link layer not decoded."""


#: The columns of :func:`packets` when ``fields`` is not given: the per-packet table's
#: (``analyze --out --packets``) and the dataset's.
DEFAULT_FIELDS: tuple = tuple(_rocescope.FRAME_COLUMNS)

# Field types whose column holds times: absolute ones become Datetime("ns", "UTC"), relative
# ones Float64 seconds (as tshark prints them).
_ABSOLUTE_TIMES = {"frame.time_epoch"}
_TIME_TYPES = {"FT_RELATIVE_TIME", "FT_ABSOLUTE_TIME"}


def _python_names(message: str) -> str:
    """A command-line message with its options as keyword arguments: ``'--reorder-window-us
    <US>'`` is ``'reorder_window_us'``."""
    return re.sub(r"'--([a-z0-9-]+)(?: <[^>]*>)?'", lambda m: "'" + m.group(1).replace("-", "_") + "'", message)


def _raise(failure: BaseException) -> None:
    """The command's failure as its exception: a usage error naming a display filter is a
    :class:`FilterError`, any other an :class:`OptionError` (its options named as keyword
    arguments)."""
    kind, message = failure.args
    if kind == "usage":
        message = _python_names(message)
    usage = FilterError if message.startswith("display filter") else OptionError
    cls = {"capture": CaptureError, "usage": usage, "output": OutputError}.get(kind, RocescopeError)
    raise cls(message) from None


def _warn(messages: Iterable[str]) -> None:
    for message in messages:
        warnings.warn(message, RocescopeWarning, stacklevel=3)


def _paths(path_or_paths: Union[PathLike, Sequence[PathLike]]) -> list:
    if isinstance(path_or_paths, (str, os.PathLike)):
        return [os.fspath(path_or_paths)]
    paths = [os.fspath(p) for p in path_or_paths]
    if not paths:
        raise OptionError("no capture file given")
    return paths


def _field_types() -> dict:
    return {name: ty for name, _label, ty, _proto, _base, _blurb in _rocescope.field_registry()}


def _typed(frame: pl.DataFrame) -> pl.DataFrame:
    """Times as Datetime (absolute) or Float64 seconds (relative)."""
    types = _field_types()
    casts = []
    for name in frame.columns:
        if types.get(name) not in _TIME_TYPES:
            continue
        if name in _ABSOLUTE_TIMES or types[name] == "FT_ABSOLUTE_TIME":
            casts.append(pl.col(name).cast(pl.Datetime("ns", "UTC")))
        else:
            casts.append((pl.col(name).cast(pl.Float64) / 1e9).alias(name))
    return frame.with_columns(casts) if casts else frame


# The options of `rocescope packets` that shape its printed output: not options here.
_NOT_PACKETS_OPTIONS = {"verbose", "hex", "format", "json", "time"}


def packets(
    path_or_paths: Union[PathLike, Sequence[PathLike]],
    *,
    display_filter: Optional[str] = None,
    fields: Optional[Sequence[str]] = None,
    threads: Optional[int] = None,
    progress: Optional[Progress] = None,
    **options: Any,
) -> pl.DataFrame:
    """One row per frame, one column per field: the rows ``rocescope packets -Y FILTER -T fields``
    prints.

    ``display_filter`` (as :func:`analyze` names it) is a Wireshark display filter (``infiniband.bth.psn > 100``); the analysis sees
    every frame, so the ``rocescope.analysis.*`` columns are those of the whole capture.
    ``fields`` names any registered fields (:func:`fields` lists them), :data:`DEFAULT_FIELDS`
    when not given. Each column holds the field's innermost occurrence (the RoCE packet's own
    headers in a mirror frame), null where the frame has none: integers as unsigned integers,
    booleans, addresses as tshark prints them, ``frame.time_epoch`` as ``Datetime("ns", "UTC")``
    and relative times as seconds. ``threads`` above 1 reads compressed input on a thread of its
    own. ``progress(bytes_read, total_bytes)`` is called now and then (``total_bytes`` None
    when unknown). ``options`` are ``packets``' other options by their long names, ``-`` as
    ``_``: the frame choices (``qp=0x12a``, ``ip="10.0.0.1"``, ``opcode=17``,
    ``only="errors"``, ``count=100``) and the decoding (``roce_port=4792``, ``uet_port=…``,
    ``uet_ip_protocol=…``, ``time_source="hardware"``).
    """
    names = list(DEFAULT_FIELDS if fields is None else fields)
    if not names:
        raise OptionError("fields: name one field at least")
    if "filter" in options:
        raise OptionError("filter: say display_filter=…, as rocescope.analyze names it")
    _refuse(options, _NOT_PACKETS_OPTIONS, "packets", "the rows are returned, not printed")
    args = _paths(path_or_paths) + _option_args(options)
    if display_filter is not None:
        args += ["-Y", display_filter]
    if threads is not None:
        args += ["--threads", str(threads)]
    try:
        stream, messages = _rocescope.packets(args, names, progress)
    except _rocescope.NativeFailure as failure:
        _raise(failure)
    _warn(messages)
    return _typed(pl.DataFrame(stream))


def fields() -> pl.DataFrame:
    """The field registry, like ``tshark -G fields``: name, label, type, protocol, base and
    description of every field rocescope decodes (Wireshark's names where Wireshark has the
    field)."""
    rows = _rocescope.field_registry()
    columns = ["name", "label", "type", "protocol", "base", "description"]
    return pl.DataFrame(rows, schema=columns, orient="row")


# The findings table's list columns, and their items' type.
_FINDING_LISTS = {
    "evidence_flows": pl.UInt64,
    "evidence_frames": pl.UInt64,
    "evidence_lines": pl.Utf8,
    "evidence_devices": pl.Utf8,
    "evidence_config_lines": pl.Utf8,
}


def _listed(frame: pl.DataFrame, lists: Mapping[str, Any]) -> pl.DataFrame:
    """``frame`` with each of ``lists``' text columns (items joined by ``;``) as a list column."""
    present = [name for name in lists if name in frame.columns]
    split = [
        pl.when(pl.col(name).fill_null("") == "")
        .then(pl.lit([], dtype=pl.List(lists[name])))
        .otherwise(pl.col(name).str.split(";").cast(pl.List(lists[name])))
        .alias(name)
        for name in present
    ]
    return frame.with_columns(split) if split else frame


# The options of `rocescope analyze` that write files or choose an output: not options here.
_NOT_ANALYZE_OPTIONS = {"json", "out", "html", "trace", "state", "resume", "fail_on", "quiet", "color", "packets", "count"}
# The policy file's keys, as `analyze`'s flags.
_POLICY_KEYS = {"data_dscp", "cnp_dscp", "data_pcp", "cnp_pcp", "lossless_priority", "cm_dscp", "require_ect"}


def _refuse(options: Mapping[str, Any], not_options: set, call: str, why: str) -> None:
    """Refuses the first of ``options`` that is among a call's ``not_options``."""
    refused = sorted(set(options) & not_options)
    if refused:
        raise OptionError(f"{refused[0]}: not an option of rocescope.{call} ({why})")


def _option_args(options: Mapping[str, Any]) -> list:
    """A command's long options from keyword arguments (``reorder_window_us=20`` is
    ``--reorder-window-us 20``); a list value repeats the option, ``True`` gives a flag."""
    args: list = []
    for name, value in options.items():
        if name == "policy" and isinstance(value, Mapping):
            args += _policy_args(value)
            continue
        flag = "--" + name.replace("_", "-")
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            if v is True:
                args.append(flag)
            elif v is False or v is None:
                continue
            else:
                args += [flag, os.fspath(v) if isinstance(v, os.PathLike) else str(v)]
    return args


def _policy_args(policy: Mapping[str, Any]) -> list:
    unknown = sorted(set(policy) - _POLICY_KEYS)
    if unknown:
        raise OptionError(f"policy: no key {unknown[0]} (the keys are {', '.join(sorted(_POLICY_KEYS))})")
    args: list = []
    for key, value in policy.items():
        if key == "require_ect":
            if not value:
                args.append("--allow-not-ect")
        else:
            args += ["--" + key.replace("_", "-"), str(value)]
    return args


class Report:
    """What ``rocescope analyze`` reports: the tables ``--out`` writes as DataFrames, the JSON
    report as a dict, the text summary."""

    def __init__(self, native: Any) -> None:
        self._native = native
        self._tables: Optional[dict] = None
        self._dict: Optional[dict] = None

    def table(self, name: str) -> pl.DataFrame:
        """The ``--out`` table ``name`` (``flows``, ``retransmit_episodes``, ``findings``,
        ``pfc``, ``cnp_bursts``, ``incast``; ``hops``, ``counters`` and ``uet_pdcs`` when the
        report has them)."""
        if self._tables is None:
            self._tables = {name: pl.DataFrame(stream) for name, stream in self._native.tables()}
        if name not in self._tables:
            raise KeyError(f"no table {name!r} (the report has {', '.join(self._tables)})")
        return self._tables[name]

    @property
    def flows(self) -> pl.DataFrame:
        """One row per flow (a QP's packets in one direction): the ``flows`` table."""
        return self.table("flows")

    @property
    def episodes(self) -> pl.DataFrame:
        """One row per retransmit episode: the ``retransmit_episodes`` table."""
        return self.table("retransmit_episodes")

    @property
    def findings(self) -> pl.DataFrame:
        """One row per finding, with its evidence, cause and first action; the evidence's
        lists (``evidence_flows``, ``evidence_frames``, ``evidence_lines``, ``evidence_devices``,
        ``evidence_config_lines``) as lists, where the CSV and Parquet tables hold them as text
        joined by ``;``."""
        return _listed(self.table("findings"), _FINDING_LISTS)

    @property
    def pause_sources(self) -> pl.DataFrame:
        """One row per PFC (source, priority) and per 802.3x PAUSE source: the ``pfc`` table."""
        return self.table("pfc")

    @property
    def cnp_bursts(self) -> pl.DataFrame:
        """One row per CNP burst, with the sender's reaction."""
        return self.table("cnp_bursts")

    @property
    def incast(self) -> pl.DataFrame:
        """One row per incast period."""
        return self.table("incast")

    def to_dict(self) -> dict:
        """The JSON report (``analyze --json``) as a dict."""
        if self._dict is None:
            import json

            self._dict = json.loads(self._native.json())
        return self._dict

    def summary(self) -> str:
        """The text report ``rocescope analyze`` prints."""
        return self._native.summary()

    def html(self) -> str:
        """The HTML page ``rocescope analyze --html FILE`` writes: findings, flows, charts."""
        return self._native.html()

    def __repr__(self) -> str:
        r = self.to_dict()
        totals = r["totals"]
        return f"<rocescope.Report: {totals['frames']} frames, {len(r['flows'])} flows, {len(r['findings'])} findings>"

    def _repr_html_(self) -> str:
        findings = self.findings.select(["severity", "code", "message"])
        flows = self.flows
        return (
            f"<p>{self.__repr__()[1:-1]}</p><h4>Findings</h4>{findings._repr_html_()}"
            f"<h4>Flows</h4>{flows._repr_html_()}"
        )


def analyze(
    path_or_paths: Union[PathLike, Sequence[PathLike]],
    *,
    progress: Optional[Progress] = None,
    **options: Any,
) -> Report:
    """Analyses captures as ``rocescope analyze FILES…`` does: the :class:`Report`.

    ``options`` are ``analyze``'s options by their long names, ``-`` as ``_``:
    ``link_speed="100G"``, ``reorder_window_us=20``, ``display_filter="…"``, ``threads=4``,
    ``tap=["host=a.pcap", "leaf=b.pcap"]`` (a list repeats the option), ``allow_not_ect=True``,
    ``qps=["10.0.0.1=host1.qps"]`` (the hosts' QP tables), ``nccl_log=["10.0.0.1=rank0.log"]``,
    ``config=["10.0.0.1=host1-qos.txt", "leaf1=config_db.json"]`` (the fabric's configuration);
    ``policy`` a policy file's path or a dict of its keys (``{"data_dscp": 26, "cnp_dscp":
    48}``). A value rocescope refuses raises :class:`OptionError` with the command's message.
    """
    _refuse(options, _NOT_ANALYZE_OPTIONS, "analyze", "the report is returned, not written")
    args = _paths(path_or_paths) + _option_args(options)
    try:
        native, messages = _rocescope.analyze(args, progress)
    except _rocescope.NativeFailure as failure:
        _raise(failure)
    _warn(messages)
    return Report(native)
