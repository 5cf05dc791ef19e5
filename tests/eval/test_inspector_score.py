"""`schedrl inspector score`: the table of issue 46 (paired with the reference, MDE, the seeds' pooled row) and its
refusals. Heuristics on the embedded `default` scenario's validation sequences: no ../shared, no Ray."""

from __future__ import annotations

import json

import numpy as np
import pytest
from cli_process import run_cli

from schedrl.eval.inspector_score import score


def test_the_pooled_row_is_the_per_sequence_mean_of_the_pooled_policies_paired_with_the_reference():
    r = score("default", ["sjf", "wfp3", "fcfs"], "validation", pool=["sjf", "wfp3"])
    rows = {row["method"]: row for row in r["rows"]}
    pooled = "pooled over 2"
    assert r["pool"] == ["sjf", "wfp3"]
    assert np.allclose(rows[pooled]["values"], np.mean([rows["SJF"]["values"], rows["WFP3"]["values"]], axis=0))
    assert rows[pooled]["utilization"] == pytest.approx(np.mean([rows["SJF"]["utilization"],
                                                                 rows["WFP3"]["utilization"]]))
    c = rows[pooled]["paired"]
    ref = np.array(rows[r["reference"]]["values"])
    assert c["difference_pct"] == pytest.approx(100 * (np.mean(rows[pooled]["values"]) - ref.mean()) / ref.mean(),
                                                rel=1e-6)
    assert all(row["paired"]["mde_pct"] > 0 for row in r["rows"] if "paired" in row)


def test_the_cli_prints_the_mde_and_writes_the_json_through_the_output_claim(tmp_path):
    out = tmp_path / "s.json"
    done = run_cli("inspector", "score", "--scenario", "default", "--policies", "sjf,wfp3", "--pool", "sjf,wfp3",
                    "--json", str(out))
    assert done.returncode == 0, done.stderr
    assert "| MDE |" in done.stdout and "| pooled over 2 |" in done.stdout
    assert "pooled over 2: the per-sequence mean of sjf, wfp3." in done.stdout
    assert {row["method"] for row in json.loads(out.read_text())["rows"]} >= {"SJF", "WFP3", "pooled over 2"}
    again = run_cli("inspector", "score", "--scenario", "default", "--policies", "sjf", "--json", str(out))
    assert again.returncode == 0, again.stderr  # its own file: replaced


@pytest.mark.parametrize("extra, words", [
    (["--pool", "sjf,nosuch"], "--pool names nosuch, not among --policies"),
    (["--pool", "sjf,sjf"], "--pool needs at least two policies"),
    (["--pool", ","], "--pool names no policy"),
    (["--json", "FOREIGN"], "schedrl did not write it"),
])
def test_bad_pools_and_a_foreign_json_are_refused_in_one_line_before_scoring(tmp_path, extra, words):
    foreign = tmp_path / "notes.json"
    foreign.write_text("the user's")
    extra = [str(foreign) if x == "FOREIGN" else x for x in extra]
    done = run_cli("inspector", "score", "--scenario", "default", "--policies", "sjf,fcfs", *extra)
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and words in errors[0], done.stderr
    assert foreign.read_text() == "the user's"
    assert "scored" not in done.stderr
