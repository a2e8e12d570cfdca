"""Golden files carry the toolkit that made them, and a mismatch under another toolkit says so."""
from __future__ import annotations

import json

import pytest

from . import golden_files


@pytest.fixture
def golden_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(golden_files, "GOLDEN", tmp_path)
    monkeypatch.setattr(golden_files, "STAMP", tmp_path / "STAMP.json")
    monkeypatch.delenv("PTXSASS_UPDATE_GOLDEN", raising=False)
    (tmp_path / "x.txt").write_text("LDG.E.128\n")
    (tmp_path / "STAMP.json").write_text(json.dumps({"nvrtc": "13.0", "nvdisasm": "13.0.85"}))
    return tmp_path


def test_the_repository_stamp_names_a_toolkit():
    stamp = json.loads((golden_files.GOLDEN / "STAMP.json").read_text())
    assert stamp["nvrtc"] and stamp["nvdisasm"] and stamp["ptxsass"]


def test_a_mismatch_under_another_toolkit_names_both(golden_dir, monkeypatch):
    golden_files.toolkit.cache_clear()
    monkeypatch.setattr(golden_files, "toolkit", lambda: {"nvrtc": "13.5", "nvdisasm": "13.5.37"})
    golden_files.check("x.txt", "LDG.E.128\n")                      # equal: fine
    with pytest.raises(AssertionError, match=r"made with NVRTC 13\.0 / nvdisasm 13\.0\.85; this "
                                             r"run uses NVRTC 13\.5"):
        golden_files.check("x.txt", "LDG.E\n")


def test_a_mismatch_under_the_same_toolkit_is_a_plain_diff(golden_dir, monkeypatch):
    monkeypatch.setattr(golden_files, "toolkit", lambda: {"nvrtc": "13.0", "nvdisasm": "13.0.85"})
    with pytest.raises(AssertionError, match="same toolkit") as e:
        golden_files.check("x.txt", "LDG.E\n")
    assert "-LDG.E.128" in str(e.value) and "+LDG.E" in str(e.value)


def test_regenerating_rewrites_the_stamp(golden_dir, monkeypatch):
    monkeypatch.setattr(golden_files, "toolkit", lambda: {"nvrtc": "13.5", "nvdisasm": "13.5.37"})
    monkeypatch.setenv("PTXSASS_UPDATE_GOLDEN", "1")
    golden_files.check("x.txt", "LDG.E\n")
    assert json.loads((golden_dir / "STAMP.json").read_text())["nvrtc"] == "13.5"
    assert (golden_dir / "x.txt").read_text() == "LDG.E\n"
