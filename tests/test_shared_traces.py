"""tests/shared_traces.py finds a real trace where users' commands find it: ../shared/traces, else a directory of
`$SCHEDRL_TRACE_PATH`."""

from __future__ import annotations

import pytest
from shared_traces import shared_trace


def test_a_trace_on_the_trace_path_is_found(tmp_path, monkeypatch):
    mine = tmp_path / "traces" / "mine.swf.gz"
    mine.parent.mkdir()
    mine.write_bytes(b"")
    monkeypatch.setenv("SCHEDRL_TRACE_PATH", f"{tmp_path / 'elsewhere'}:{mine.parent}")
    assert shared_trace("mine.swf.gz", root=tmp_path / "no-shared") == mine


def test_the_shared_directory_comes_first(tmp_path, monkeypatch):
    for where in ("shared", "path"):
        (tmp_path / where).mkdir()
        (tmp_path / where / "t.swf").write_text("")
    monkeypatch.setenv("SCHEDRL_TRACE_PATH", str(tmp_path / "path"))
    assert shared_trace("t.swf", root=tmp_path / "shared") == tmp_path / "shared" / "t.swf"


def test_a_trace_found_nowhere_skips_naming_both_places(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDRL_TRACE_PATH", str(tmp_path))
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"nothing.swf.gz not found in .*no-shared or on \$SCHEDRL_TRACE_PATH"):
        shared_trace("nothing.swf.gz", root=tmp_path / "no-shared")
