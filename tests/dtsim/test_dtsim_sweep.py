"""The predictable job fraction (RLSchert Table 9) and `schedrl dtsim sweep` (Fig. 10, Fig. 11, Table 9)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from builders import table_of

from schedrl.cli.main import main
from schedrl.dtsim import DTSim, DTSimConfig, JobSequence, sample_sequence, synthetic_jobs
from schedrl.dtsim.fidelity import fidelity, fidelity_sequences
from schedrl.dtsim.heuristics import SJF, KillRule, WithKill, make_policy, run
from schedrl.dtsim.sweep import SkipCell, format_table, sweep

TABLE = synthetic_jobs(2000, seed=3)

# fidelity(TABLE, DTSimConfig(simu_len=60), sequences=3, seed=1, kill=...) before `predictable` existed (commit 1a8f66c)
BEFORE = {False: {"tetris": 3.0461554902981773, "random": 3.3606269975786236, "sjf": 1.834022395089418,
                  "tetris*": 1.8437080310120901, "saf": 1.799471336528873},
          True: {"tetris": 3.100993750916882, "random": 3.3462602263761654, "sjf": 1.8839017855026305,
                 "tetris*": 1.8916640060872532, "saf": 1.8535171972515903}}


# ---- predictable -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kill", [False, True])
def test_predictable_one_is_todays_cluster(kill):
    for config in (DTSimConfig(simu_len=60), DTSimConfig(simu_len=60, predictable=1.0)):
        rows = fidelity(TABLE, config, sequences=3, seed=1, kill=kill)
        assert {r.policy: r.ours for r in rows} == pytest.approx(BEFORE[kill], rel=1e-12, abs=0)


def test_predictable_draws_come_after_the_jobs_and_only_below_one():
    full = sample_sequence(TABLE, DTSimConfig(), np.random.default_rng(4))
    assert full.predictability is None
    rng = np.random.default_rng(4)
    part = sample_sequence(TABLE, DTSimConfig(predictable=0.5), rng)
    assert np.array_equal(part.arrival, full.arrival) and np.array_equal(part.row, full.row)
    assert part.predictability is not None and len(part.predictability) == len(part.row)
    other = sample_sequence(TABLE, DTSimConfig(predictable=0.8), np.random.default_rng(4))
    assert np.array_equal(other.predictability, part.predictability)  # the same draws at every fraction below 1


def _records(table, seq, config, policy):
    sim = DTSim(table, seq, config)
    summary = run(sim, policy)
    r = sim.records()
    return summary, (r.start.tolist(), r.finish.tolist(), r.kills.tolist())


def test_predictable_zero_is_prerun_for_every_job():
    kills_recorded = 0
    for seed in range(4):
        base = DTSimConfig(simu_len=120, job_rate=0.9, predictable=0.0)
        seq = sample_sequence(TABLE, base, np.random.default_rng(seed))
        for make in (lambda: WithKill(SJF(), KillRule()), lambda: make_policy("tetris", kill=True)):
            zero = _records(TABLE, seq, base, make())
            prerun = _records(TABLE, seq, DTSimConfig(simu_len=120, job_rate=0.9, estimates="prerun"), make())
            recorded = _records(TABLE, seq, DTSimConfig(simu_len=120, job_rate=0.9), make())
            assert zero[1] == prerun[1] and zero[0] == prerun[0]
            assert zero[0].kills == 0
            kills_recorded += recorded[0].kills
    assert kills_recorded > 0  # with re-estimates followed, the kill rule does fire: the comparison is not vacuous


def test_an_unpredictable_job_keeps_its_prerun_prediction_while_it_runs():
    # two identical jobs whose re-estimates grow from 2 to 6; only the first one's draw is below 0.5
    table = table_of([(6, 2, 10, [3, 4, 5, 6, 6]), (6, 2, 10, [3, 4, 5, 6, 6])])
    seq = JobSequence(arrival=np.zeros(2, dtype=np.int32), row=np.arange(2), predictability=np.array([0.1, 0.9]))
    sim = DTSim(table, seq, DTSimConfig(predictable=0.5))
    assert sim.predictable == [True, False]
    sim.step(0)
    sim.step(0)
    for _ in range(3):
        sim.step(sim.config.void_action)
    assert (sim.estimate(0), sim.estimate(1)) == (5, 2)
    assert (sim.remaining(0), sim.remaining(1)) == (2, 1)  # the unpredictable one looks about to end


def test_predictable_fraction_over_a_long_sequence():
    long = DTSimConfig(simu_len=20_000, max_seq=20_000, job_rate=1.0)
    chosen = {}
    for p in (0.0, 0.3, 0.8, 1.0):
        config = DTSimConfig(simu_len=20_000, max_seq=20_000, job_rate=1.0, predictable=p)
        sim = DTSim(TABLE, sample_sequence(TABLE, config, np.random.default_rng(11)), config)
        chosen[p] = np.array(sim.predictable)
        assert chosen[p].mean() == pytest.approx(p, abs=0.015)
    assert not np.any(chosen[0.3] & ~chosen[0.8])  # nested: a job predictable at 0.3 is predictable at 0.8
    prerun = DTSim(TABLE, sample_sequence(TABLE, long, np.random.default_rng(11)), DTSimConfig(
        simu_len=20_000, max_seq=20_000, job_rate=1.0, estimates="prerun"))
    assert not any(prerun.predictable)


def test_predictable_out_of_range_is_one_line():
    for bad in (-0.1, 1.5, float("nan"), True):
        with pytest.raises(ValueError, match=r"^DTSimConfig.predictable must be a fraction in \[0, 1\]") as e:
            DTSimConfig(predictable=bad)
        assert "\n" not in str(e.value)
    table = table_of([(3, 2, 10, [2, 3])])
    seq = JobSequence(arrival=np.zeros(1, dtype=np.int32), row=np.arange(1))
    with pytest.raises(ValueError, match="needs the sequence's predictability draws"):
        DTSim(table, seq, DTSimConfig(predictable=0.5))
    assert DTSim(table, seq, DTSimConfig(predictable=0.0)).predictable == [False]  # 0: nobody, no draws needed


# ---- the sweep ---------------------------------------------------------------------------------------------------

BASE = DTSimConfig(simu_len=60)


def _check_against_fidelity(result, base, param, kill):
    for i, value in enumerate(result.values):
        config = replace(base, **{param: value})
        for with_kill in ([False, True] if kill else [False]):
            for row in fidelity(TABLE, config, sequences=3, seed=2, kill=with_kill):
                cell = result.cells[row.policy + ("+kill" if with_kill else "")][i]
                assert cell.mean == pytest.approx(row.ours, rel=1e-12, abs=0), (param, value, row.policy)
                assert cell.stderr == pytest.approx(row.stderr, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(("param", "values"), [("job_rate", [0.4, 0.95]), ("res_slot", [12, 24]),
                                               ("predictable", [0.0, 1.0])])
def test_sweep_cells_are_fidelity_at_each_value(param, values):
    base = BASE if param != "predictable" else DTSimConfig(simu_len=100, job_rate=0.9)  # enough jobs to kill
    result = sweep(TABLE, base, param, values, sequences=3, seed=2, kill=True)
    assert result.methods == ["tetris", "random", "sjf", "tetris*", "saf",
                              "tetris+kill", "random+kill", "sjf+kill", "tetris*+kill", "saf+kill"]
    _check_against_fidelity(result, base, param, kill=True)
    sjf = [c.mean for c in result.cells["sjf"]]
    if param != "predictable":  # the setting really changes the cluster: the two rows differ
        assert sjf[0] != sjf[1]
    else:  # without predictable jobs the kill rule never fires; with them it does
        assert result.cells["sjf+kill"][0].values == result.cells["sjf"][0].values
        assert result.cells["sjf+kill"][1].values != result.cells["sjf"][1].values


class _Fixed:
    """A method that runs SJF, and cannot run at res_slot 12."""

    label = "mine"

    def policy_at(self, config, table):
        if config.res_slot == 12:
            raise SkipCell("no model for res_slot 12")
        return SJF(), config


def test_methods_run_on_the_same_sequences_and_skipped_cells_carry_their_note():
    result = sweep(TABLE, BASE, "res_slot", [12, 20], sequences=2, seed=0, methods=[_Fixed()])
    assert result.methods[-1] == "mine"
    skipped, ran = result.cells["mine"]
    assert skipped.values == () and skipped.note == "no model for res_slot 12"
    assert ran.values == result.cells["sjf"][1].values
    text = format_table(result)
    assert "| 12 | " in text and "n/a (1)" in text and "(1) mine at res_slot 12: no model for res_slot 12" in text
    seqs = fidelity_sequences(TABLE, DTSimConfig(simu_len=60, res_slot=20), 2, 0)
    assert len(ran.values) == len(seqs) == 2


def _cli(capsys, *args):
    code = main(["dtsim", "sweep", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_prints_the_table_and_plots(capsys, tmp_path):
    png = tmp_path / "fig10.png"
    code, out, err = _cli(capsys, "--param", "job_rate", "--values", "0.3,0.7", "--jobs", "synthetic",
                          "--sequences", "2", "--simu-len", "40", "--kill", "--plot", str(png))
    assert code == 0, err
    rows = [line for line in out.splitlines() if line.startswith("| 0.")]
    assert [r.split("|")[1].strip() for r in rows] == ["0.3", "0.7"]
    assert all(len(r.split("|")) == 13 for r in rows)  # value + 10 methods
    assert png.stat().st_size > 0
    code, out, _ = _cli(capsys, "--param", "predictable", "--values", "0,1", "--jobs", "synthetic",
                        "--sequences", "2", "--simu-len", "40", "--json")
    data = json.loads(out)
    assert code == 0 and data["param"] == "predictable" and data["values"] == [0.0, 1.0]
    expected = sweep(synthetic_jobs(5000, seed=0), DTSimConfig(simu_len=40), "predictable", [0.0, 1.0], sequences=2)
    assert [c["per_sequence"] for c in data["cells"]["saf"]] == [list(c.values) for c in expected.cells["saf"]]


@pytest.mark.parametrize(("args", "message"), [
    (["--param", "load", "--values", "1"], "error: unknown --param 'load'; choose one of job_rate, res_slot, predictable"),
    (["--param", "job_rate", "--values", "0.5,1.5"], "error: DTSimConfig.job_rate must be in (0, 1], got 1.5"),
    (["--param", "job_rate", "--values", "0.5,fast"], "error: --values: 'fast' is not a number"),
    (["--param", "res_slot", "--values", "8,12"], "error: res_slot=8 is smaller than the largest job of"),
    (["--param", "res_slot", "--values", "12.5"], "error: --values: res_slot takes whole resource units, got 12.5"),
    (["--param", "predictable", "--values", "0,2"], "error: DTSimConfig.predictable must be a fraction in [0, 1], got 2.0"),
    (["--param", "job_rate", "--sequences", "0"], "error: --sequences must be >= 1, got 0"),
    (["--values", "0.5"], "error: the following arguments are required: --param"),
    (["--param", "job_rate", "--checkpoint", "/no/such/checkpoint"], "error: checkpoint /no/such/checkpoint does not exist"),
])
def test_cli_bad_input_is_one_error_line(capsys, args, message):
    code, out, err = _cli(capsys, *args, "--jobs", "synthetic")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith(message), err
