"""The example scenario of a site running Slurm with its defaults (`examples/scenarios/hpc2n-slurm.yaml`): its
semantics are `backfill: slurm` with HPC2N's node plan, and its reference is the best baseline on its validation
sequences (as every standard scenario's)."""

from __future__ import annotations

from pathlib import Path

from schedrl.scenarios import get_scenario, scoring
from schedrl.sim import SimConfig
from shared_traces import shared_trace

FILE = Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "hpc2n-slurm.yaml"


def test_the_slurm_site_scenario_runs_slurms_defaults_and_names_its_best_baseline():
    s = get_scenario(str(FILE))
    assert s.sim == SimConfig.slurm(node_procs=2)
    assert "bf_interval 30 s, bf_resolution 60 s" in s.describe()
    shared_trace("HPC2N-2002-2.2-cln.swf.gz")
    best, _ = scoring.best_baseline(scoring.score(s, part="validation"))
    assert best == s.reference == "F1+SLURM"
