"""`rocescope.analyze` reports what `rocescope analyze --json` reports, its tables are the ones
`--out` writes, its options are the command's and are refused as the command refuses them."""

import subprocess
import sys

import polars as pl
import pytest

import rocescope
from conftest import ROOT, capture_id, captures, run, run_json

TABLES = {
    "flows": "flows",
    "episodes": "retransmit_episodes",
    "findings": "findings",
    "pause_sources": "pfc",
    "cnp_bursts": "cnp_bursts",
    "incast": "incast",
}


@pytest.mark.parametrize("path", captures(), ids=capture_id)
def test_the_report_is_the_commands(path):
    report = rocescope.analyze(path)
    assert report.to_dict() == run_json("analyze", "--json", str(path))
    assert report.summary() == run("analyze", "--color", "never", str(path))


def test_the_page_is_the_one_html_writes(tmp_path):
    for name in ("loss_go_back_n.pcap", "pfc_storm.pcap", "uet_trimmed.pcap"):
        path = ROOT / "samples" / name
        page = tmp_path / f"{path.stem}.html"
        run("analyze", "-q", "--html", str(page), str(path))
        assert rocescope.analyze(path).html() == page.read_text(), name


def test_the_tables_are_those_out_writes(tmp_path):
    for path in [ROOT / "samples" / name for name in ("reordering.pcap", "pfc_storm.pcap", "incast.pcap", "uet_trimmed.pcap")]:
        out = tmp_path / path.stem
        run("analyze", "-q", "--out", str(out), str(path))
        report = rocescope.analyze(path)
        for attribute, name in TABLES.items():
            written = pl.read_parquet(out / f"{name}.parquet")
            assert report.table(name).equals(written), f"{path.name}: {name}"
            # the attributes are the tables, the findings' evidence lists as lists
            same_columns = getattr(report, attribute).columns == written.columns
            assert same_columns and (attribute == "findings" or getattr(report, attribute).equals(written)), name
        if path.stem.startswith("uet"):
            assert report.table("uet_pdcs").equals(pl.read_parquet(out / "uet_pdcs.parquet"))
    assert rocescope.analyze(ROOT / "samples" / "reordering.pcap").flows.height > 0


def test_options_are_the_commands_long_options():
    path = ROOT / "samples" / "reordering.pcap"
    report = rocescope.analyze(path, reorder_window_us=1, link_speed="25G", policy={"data_dscp": 10, "require_ect": False})
    cli = run_json(
        "analyze", "--json", "--reorder-window-us", "1", "--link-speed", "25G", "--data-dscp", "10", "--allow-not-ect", str(path)
    )
    assert report.to_dict() == cli
    assert report.to_dict() != rocescope.analyze(path).to_dict(), "the options changed the report"
    several = rocescope.analyze([path, ROOT / "samples" / "incast.pcap"], display_filter="ip.src == 10.0.0.1")
    assert several.to_dict() == run_json(
        "analyze", "--json", "-Y", "ip.src == 10.0.0.1", str(path), str(ROOT / "samples" / "incast.pcap")
    )


def test_bad_options_and_inputs_raise_the_commands_errors(tmp_path):
    path = ROOT / "samples" / "reordering.pcap"
    with pytest.raises(rocescope.OptionError, match="invalid value 'soon' for 'reorder_window_us': invalid digit"):
        rocescope.analyze(path, reorder_window_us="soon")
    with pytest.raises(rocescope.OptionError, match="unexpected argument 'bogus'"):
        rocescope.analyze(path, bogus=1)
    with pytest.raises(rocescope.OptionError, match="not an option of rocescope.analyze"):
        rocescope.analyze(path, out=str(tmp_path))
    with pytest.raises(rocescope.OptionError, match="policy: no key"):
        rocescope.analyze(path, policy={"dscp": 1})
    with pytest.raises(ValueError):
        rocescope.analyze(path, data_dscp=99)
    with pytest.raises(rocescope.FilterError, match="display filter"):
        rocescope.analyze(path, display_filter="ip.src ==")
    with pytest.raises(rocescope.CaptureError, match="no such file") as raised:
        rocescope.analyze(tmp_path / "missing.pcap")
    assert raised.value.status == 1


def test_a_notebook_shows_the_findings_and_flows():
    report = rocescope.analyze(ROOT / "samples" / "reordering.pcap")
    page = report._repr_html_()
    assert "REORDERING" in page and "<table" in page and "Flows" in page
    assert repr(report).startswith("<rocescope.Report: 96 frames, 4 flows")


def test_progress_reaches_the_end():
    path = ROOT / "samples" / "incast.pcap"
    seen = []
    rocescope.analyze(path, progress=lambda read, total: seen.append((read, total)))
    assert seen[-1] == (path.stat().st_size, path.stat().st_size)


def test_an_error_in_the_progress_callback_is_raised():
    def fails(read, total):
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"):
        rocescope.analyze(ROOT / "samples" / "incast.pcap", progress=fails)


def test_a_damaged_capture_warns_and_is_analysed_up_to_the_damage(tmp_path):
    whole = ROOT / "samples" / "loss_go_back_n.pcap"
    cut = tmp_path / "cut.pcap"
    data = whole.read_bytes()
    cut.write_bytes(data[: len(data) * 2 // 3])
    with pytest.warns(rocescope.RocescopeWarning, match="the rest of this file is skipped"):
        report = rocescope.analyze(cut)
    assert report.to_dict() == run_json("analyze", "--json", str(cut))
    assert 0 < report.to_dict()["totals"]["frames"] < rocescope.analyze(whole).to_dict()["totals"]["frames"]


def test_counters_of_a_host_the_capture_lacks_warn_as_the_command_does(tmp_path):
    before, after = tmp_path / "b.txt", tmp_path / "a.txt"
    before.write_text("NIC statistics:\n     np_cnp_sent: 10\n")
    after.write_text("NIC statistics:\n     np_cnp_sent: 12\n")
    counters = f"10.9.9.9={before},{after}"
    path = ROOT / "samples" / "incast.pcap"
    with pytest.warns(rocescope.RocescopeWarning, match="--counters 10.9.9.9: no RoCE frame is from or to 10.9.9.9"):
        report = rocescope.analyze(path, counters=counters)
    assert report.to_dict() == run_json("analyze", "--json", "--counters", counters, str(path))


def test_the_fabrics_configuration_is_checked_as_the_command_checks_it():
    fabric = ROOT / "samples" / "fabric" / "nvidia"
    configs = [f"10.0.0.1={fabric / '10.0.0.1.txt'}", f"leaf1={fabric / 'leaf1-nv.yaml'}"]
    path = ROOT / "samples" / "congestion_ecn_cnp.pcap"
    report = rocescope.analyze(path, config=configs)
    args = [arg for config in configs for arg in ("--config", config)]
    assert report.to_dict() == run_json("analyze", "--json", *args, str(path))
    assert report.to_dict()["fabric"]["policy"]["data_dscp"] == 26
    assert "QOS_LOSSY_ROCE" in report.findings["code"].to_list()


def test_the_findings_evidence_lists_are_lists():
    path = ROOT / "samples" / "loss_go_back_n.pcap"
    report = rocescope.analyze(path)
    findings = report.findings
    assert findings.schema["evidence_frames"] == pl.List(pl.UInt64)
    assert findings.schema["evidence_config_lines"] == pl.List(pl.Utf8)
    for row, finding in zip(findings.iter_rows(named=True), report.to_dict()["findings"]):
        assert row["evidence_frames"] == finding["evidence"]["frames"]
        assert row["evidence_flows"] == finding["evidence"]["flows"]
        assert row["evidence_config_lines"] == finding["evidence"].get("config_lines", [])


def test_the_hosts_qp_tables_pair_the_flows_and_name_their_owners_in_the_dataframes():
    table = f"10.0.0.1={ROOT / 'samples' / 'qps' / '10.0.0.1.json'}"
    log = f"10.0.0.1={ROOT / 'samples' / 'qps' / '10.0.0.1.nccl.log'}"
    path = ROOT / "samples" / "path" / "host_a.pcapng"
    report = rocescope.analyze(path, qps=[table], nccl_log=[log])
    assert report.to_dict() == run_json("analyze", "--json", "--qps", table, "--nccl-log", log, str(path))
    flows = report.flows
    assert flows["pairing"].to_list() == ["host_table"] * 4
    sent_by_a = flows.filter(pl.col("src_ip") == "10.0.0.1")
    assert sent_by_a["owner_rank"].to_list() == [0, 0]
    assert sent_by_a["owner_comm"].to_list() == ["python3", "python3"]
    assert sent_by_a["dst_owner_pid"].to_list() == [None, None]


def test_python_m_rocescope_runs_the_command_line():
    path = str(ROOT / "samples" / "loss_go_back_n.pcap")
    ran = subprocess.run([sys.executable, "-m", "rocescope", "packets", "-c", "3", path], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == run("packets", "-c", "3", path)
    failing = subprocess.run([sys.executable, "-m", "rocescope", "analyze", "-q", "--fail-on", "warning", path], capture_output=True)
    assert failing.returncode == 4
    usage = subprocess.run([sys.executable, "-m", "rocescope", "packets", "-c", "0", path], capture_output=True, text=True)
    assert usage.returncode == 2 and "0 frames" in usage.stderr
