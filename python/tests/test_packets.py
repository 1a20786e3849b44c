"""`rocescope.packets` gives the rows and values `rocescope packets -T fields` prints, on every
sample and reference capture, with and without a display filter; `rocescope.fields` is the
registry `rocescope fields` lists."""

import threading
import time

import polars as pl
import pytest

import rocescope
from conftest import capture_id, captures, run

# Fields of every kind: integers in decimal and hexadecimal, times, addresses, booleans,
# strings, UET's, and the analysis's per-frame verdicts.
FIELDS = [
    "frame.number",
    "frame.time_epoch",
    "frame.time_relative",
    "frame.len",
    "eth.src",
    "ip.src",
    "ipv6.dst",
    "udp.srcport",
    "infiniband.bth.opcode",
    "infiniband.bth.destqp",
    "infiniband.bth.psn",
    "infiniband.bth.a",
    "rocescope.cnp",
    "rocescope.icrc.status",
    "uet.pds.type",
    "uet.pds.psn",
    "rocescope.analysis.flow",
    "rocescope.analysis.seq_class",
    "rocescope.analysis.retransmission",
    "rocescope.analysis.missing_psns",
]


def cli_rows(path, fields, display_filter=None):
    args = ["packets", "-T", "fields"]
    for f in fields:
        args += ["-e", f]
    if display_filter:
        args += ["-Y", display_filter]
    return [line.split("\t") for line in run(*args, str(path)).splitlines()]


def innermost(text):
    """A field's innermost occurrence, as the table holds it: the last of those printed."""
    return text.rsplit(",", 1)[-1]


def as_printed(value, dtype):
    """What the table holds, as `-T fields` would print it."""
    if value is None:
        return None
    if dtype == pl.Boolean:
        return "1" if value else "0"
    return value


def parsed(text, dtype):
    """A printed value as the table types it."""
    if text == "":
        return None
    text = innermost(text)
    if dtype == pl.Datetime("ns", "UTC"):
        seconds, fraction = text.split(".")
        return int(seconds) * 1_000_000_000 + int(fraction.ljust(9, "0"))
    if dtype.is_integer():
        return int(text, 0)
    if dtype == pl.Float64:
        return float(text)
    return text


def assert_same_rows(frame, rows, fields, where):
    assert frame.columns == fields, where
    assert frame.height == len(rows), where
    # times compared to the nanosecond (Python's datetime holds microseconds)
    exact = frame.with_columns(pl.col(pl.Datetime).dt.epoch("ns"))
    for row, printed in zip(exact.iter_rows(), rows):
        for name, value, text in zip(fields, row, printed):
            dtype = frame.schema[name]
            ours = as_printed(value, dtype)
            theirs = parsed(text, dtype)
            if dtype == pl.Float64 and ours is not None and theirs is not None:
                assert ours == pytest.approx(theirs, abs=1e-9), f"{where} frame {row[0]}: {name}"
            else:
                assert ours == theirs, f"{where} frame {row[0]}: {name}: {ours!r} != {text!r}"


@pytest.mark.parametrize("path", captures(), ids=capture_id)
def test_every_frame_has_the_values_the_command_prints(path):
    frame = rocescope.packets(path, fields=FIELDS)
    assert_same_rows(frame, cli_rows(path, FIELDS), FIELDS, path.name)


@pytest.mark.parametrize(
    "display_filter",
    [
        "rocescope.analysis.retransmission",
        "infiniband.bth.psn > 100 && ip.src == 10.0.0.1",
        "uet.pds.type == 2",
        "rocescope.icrc.status == \"bad\"",
    ],
)
def test_a_display_filter_chooses_the_rows_the_command_prints(display_filter):
    chosen = 0
    for path in captures():
        frame = rocescope.packets(path, display_filter=display_filter, fields=FIELDS)
        assert_same_rows(frame, cli_rows(path, FIELDS, display_filter), FIELDS, f"{path.name} -Y {display_filter}")
        chosen += frame.height
    assert chosen > 0, f"-Y {display_filter} chose no frame of any capture"


def test_the_default_columns_are_the_per_packet_tables_with_their_types(tmp_path):
    sample = rocescope.packets(captures()[0])
    assert list(sample.columns) == list(rocescope.DEFAULT_FIELDS)
    assert sample.schema["frame.time_epoch"] == pl.Datetime("ns", "UTC")
    assert sample.schema["frame.number"] == pl.UInt64
    assert sample.schema["ip.src"] == pl.String
    assert sample.schema["rocescope.analysis.retransmission"] == pl.Boolean


def test_a_damaged_capture_warns_and_gives_the_frames_before_the_damage(tmp_path):
    whole = captures()[0]
    cut = tmp_path / "cut.pcap"
    data = whole.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    with pytest.warns(rocescope.RocescopeWarning, match="the rest of this file is skipped"):
        frame = rocescope.packets(cut, fields=["frame.number"])
    printed = run("packets", "-T", "fields", "-e", "frame.number", str(cut)).split()
    assert frame["frame.number"].to_list() == [int(n) for n in printed]
    assert 0 < frame.height < rocescope.packets(whole, fields=["frame.number"]).height


def test_errors_are_the_commands(tmp_path):
    with pytest.raises(rocescope.CaptureError, match="no such file"):
        rocescope.packets(tmp_path / "missing.pcap")
    text = tmp_path / "notes.txt"
    text.write_text("not a capture\n")
    with pytest.raises(rocescope.CaptureError, match="not a pcap or pcapng capture"):
        rocescope.packets(text)
    with pytest.raises(rocescope.FilterError, match="display filter") as raised:
        rocescope.packets(captures()[0], display_filter="ip.src ==")
    assert isinstance(raised.value, ValueError) and raised.value.status == 2
    with pytest.raises(rocescope.OptionError, match="filter: say display_filter="):
        rocescope.packets(captures()[0], filter="ip.src == 10.0.0.1")
    with pytest.raises(rocescope.OptionError, match="did you mean ip.src"):
        rocescope.packets(captures()[0], fields=["ip.srcc"])
    with pytest.raises(rocescope.OptionError):
        rocescope.packets(captures()[0], fields=[])


def test_progress_is_reported_and_the_frames_number_alike_on_threads():
    calls = []
    path = captures()[0]
    frame = rocescope.packets(path, fields=["frame.number"], threads=2, progress=lambda read, total: calls.append((read, total)))
    assert calls and calls[-1] == (path.stat().st_size, path.stat().st_size)
    assert frame.equals(rocescope.packets(path, fields=["frame.number"]))


def test_the_registry_is_the_commands():
    registry = rocescope.fields()
    listed = [line.split("\t") for line in run("fields").splitlines()]
    names = [f[2] for f in listed]
    assert registry["name"].to_list() == names
    by_name = {f[2]: f for f in listed if f[0] == "F"}
    for row in registry.filter(pl.col("type") != "FT_PROTOCOL").iter_rows(named=True):
        assert (row["label"], row["type"], row["protocol"], row["base"], row["description"]) == (
            by_name[row["name"]][1],
            by_name[row["name"]][3],
            by_name[row["name"]][4],
            by_name[row["name"]][5],
            by_name[row["name"]][7],
        )


def test_pandas_gets_the_columns():
    pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    frame = rocescope.packets(captures()[0], fields=["frame.number", "ip.src"])
    assert frame.to_pandas()["frame.number"].tolist() == frame["frame.number"].to_list()


def test_other_threads_run_while_a_capture_is_read(tmp_path):
    capture = tmp_path / "mixed.pcap"
    run("generate", "--benchmark", "mixed", "--size", "8M", str(capture))
    done = threading.Event()
    reader = threading.Thread(target=lambda: (rocescope.packets(capture, fields=["frame.number"]), done.set()))
    turns = 0
    reader.start()
    while not done.is_set() and reader.is_alive():
        turns += 1
        time.sleep(0.001)
    reader.join()
    assert done.is_set()
    assert turns > 20, f"the main thread ran {turns} times while the capture was read"


def test_the_commands_frame_choices_and_decoding_options_are_options():
    path = captures()[0]
    fields = ["frame.number", "infiniband.bth.destqp"]
    chosen = rocescope.packets(path, fields=fields, count=3, only="roce")
    assert_same_rows(chosen, cli_rows_with(path, fields, ["-c", "3", "--only", "roce"]), fields, "count, only")
    assert chosen.height == 3
    with pytest.raises(rocescope.OptionError, match="not an option of rocescope.packets"):
        rocescope.packets(path, verbose=True)
    with pytest.raises(rocescope.OptionError, match="invalid value 'x' for 'roce_port'"):
        rocescope.packets(path, roce_port="x")


def cli_rows_with(path, fields, options):
    args = ["packets", "-T", "fields", *options]
    for f in fields:
        args += ["-e", f]
    return [line.split("\t") for line in run(*args, str(path)).splitlines()]
