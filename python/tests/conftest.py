"""What the tests compare the module with: the `rocescope` command of the same checkout
(`ROCESCOPE_BIN`, else target/debug/rocescope), on the samples and, when ../shared is beside the
checkout (`ROCESCOPE_SHARED` names another), the reference captures."""

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def binary() -> Path:
    path = Path(os.environ.get("ROCESCOPE_BIN", ROOT / "target" / "debug" / "rocescope"))
    if not path.exists():
        pytest.skip(f"no rocescope command at {path} (cargo build, or set ROCESCOPE_BIN)")
    return path


def run(*args: str) -> str:
    """The command's standard output (it must succeed)."""
    out = subprocess.run([str(binary()), *args], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def run_json(*args: str) -> dict:
    return json.loads(run(*args))


def captures() -> list:
    """The samples, then the reference captures when ../shared is there."""
    files = sorted((ROOT / "samples").glob("*.pcap*"))
    shared = Path(os.environ.get("ROCESCOPE_SHARED", ROOT.parent / "shared")) / "reference-captures"
    if shared.is_dir():
        files += sorted(p for p in shared.iterdir() if p.suffix in (".pcap", ".pcapng"))
    return files


def capture_id(path: Path) -> str:
    return path.name
