"""`schedrl mrsch goals`: the goal vector of a trained MRSch policy over one held-out sequence per augmentation."""

from __future__ import annotations

import json

import numpy as np
import pytest

from schedrl.cli.main import main

TINY = ["--trace", "default", "--augment", "S4", "--iterations", "1", "--sequence-length", "64", "--envs-per-runner", "1",
        "--validation-sequences", "1", "--eval-sequences", "1", "--eval-jobs", "64"]


@pytest.fixture(scope="module")
def checkpoint(ray_session, tmp_path_factory):
    out = tmp_path_factory.mktemp("mrsch") / "run"
    assert main(["train", "mrsch", *TINY, "--out", str(out)]) == 0
    return json.loads((out / "summary.json").read_text())["checkpoint"]


def test_goals_follow_the_workload_on_the_same_jobs(checkpoint, tmp_path, capsys):
    from schedrl.agents.mrsch.goal import goal_vector

    png = tmp_path / "goals.png"
    capsys.readouterr()
    assert main(["mrsch", "goals", checkpoint, "--augments", "S3,S5", "--jobs", "200", "--json", "--plot", str(png)]) == 0
    traces = json.loads(capsys.readouterr().out)
    assert png.stat().st_size > 10_000
    assert [t["augment"] for t in traces] == ["S3", "S5"]
    assert traces[0]["start"] == traces[1]["start"] >= 7000  # one held-out sequence (default trace: 70% trains)
    bb = traces[0]["resources"].index("bb")
    means = []
    for t in traces:
        goals = np.array(t["goals"])
        assert len(goals) >= 200 * 0.5 and np.allclose(goals.sum(axis=1), 1.0) and (goals >= 0).all()
        assert np.all(np.diff(t["hours"]) >= 0)
        means.append(goals[:, bb].mean())
    # S5 gives 75% of the jobs a burst-buffer request (S3: 50%, same sizes) and halves node requests: the burst buffer's
    # share of the demand (Eq. 1) is larger on the same jobs
    assert means[1] > means[0], means
    assert goal_vector(np.array([[0.5, 0.1]]), np.array([10.0])).tolist() == pytest.approx([0.5 / 0.6, 0.1 / 0.6])


@pytest.mark.parametrize(("extra", "message"), [
    (["--augments", "S11"], r"augment must be one of S1, .*S10 or 'none'; got 'S11'"),
    (["--jobs", "0"], r"--jobs must be >= 1, got 0"),
    (["--resource", "power"], r"no resource 'power' under S3 \(resources: "),
])
def test_bad_goals_input_is_one_line(checkpoint, extra, message, capsys):
    import re

    capsys.readouterr()
    assert main(["mrsch", "goals", checkpoint, "--augments", "S3", "--jobs", "64", *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("schedrl mrsch: error: ") and re.search(message, err), err
