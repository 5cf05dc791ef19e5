"""The standard scenario of a site running Slurm with its defaults (`hpc2n-slurm`): its semantics are `backfill: slurm`
with HPC2N's node plan, its reference is the best baseline on its validation sequences (as every standard scenario's),
and an agent trained on it trains under the site's Slurm parameters, not Slurm's defaults (the env config's `slurm`)."""

from __future__ import annotations

import pytest

from schedrl.agents import get_agent
from schedrl.agents.linear.env import LinearEnvConfig
from schedrl.agents.rlscheduler.config import RLSchedulerEnvConfig
from schedrl.scenarios import scoring
from schedrl.scenarios.registry import standard
from schedrl.sim import SimConfig
from schedrl.sim.config import SLURM_SITE, check_slurm_site
from shared_traces import shared_trace

SITE = {"bf_interval": 30, "bf_resolution": 60, "bf_window": 1440, "bf_max_job_test": 500, "node_procs": 2}


def test_the_slurm_site_scenario_runs_slurms_defaults_and_names_its_best_baseline():
    s = standard()["hpc2n-slurm"]
    assert s.sim == SimConfig.slurm(node_procs=2) and s.sim.slurm_site == SITE
    assert "bf_interval 30 s, bf_resolution 60 s" in s.describe()
    shared_trace("HPC2N-2002-2.2-cln.swf.gz")
    best, _ = scoring.best_baseline(scoring.score(s, part="validation"))
    assert best == s.reference == "F1+SLURM"


@pytest.mark.parametrize("agent", ["rlscheduler", "linear", "inspector"])
def test_an_agent_trained_on_it_carries_the_sites_slurm_into_its_semantics(agent):
    s = standard()["hpc2n-slurm"]
    assert s.agent_options(agent)["slurm"] == SITE and s.agent_options(agent)["backfill"] == "slurm"
    config_class = get_agent(agent).env_config_class
    env = config_class.from_dict({"trace": "HPC2N", "backfill": "slurm", "slurm": SITE})
    assert get_agent(agent).judge(env).sim.slurm_site == SITE
    # the same agent under Slurm's defaults (no node plan) is not trained on this scenario
    defaults = get_agent(agent).judge(config_class.from_dict({"trace": "HPC2N", "backfill": "slurm"})).sim
    assert defaults.node_procs == 0 and defaults != s.sim


def test_the_check_refuses_a_run_under_other_slurm_parameters():
    s = standard()["hpc2n-slurm"]
    agent = get_agent("linear")
    env = LinearEnvConfig(trace="HPC2N", backfill="slurm", slurm={**SITE, "bf_resolution": 600},
                          train_fraction=0.7)
    with pytest.raises(ValueError, match=r"does not train on scenario 'hpc2n-slurm': Slurm's .*'bf_resolution': 600"):
        s.check_trains("linear", agent.judge(env))


@pytest.mark.parametrize("given, message", [
    ({"bf_resolution": 60, "colour": 1}, r"slurm: unknown key\(s\) colour; the keys are bf_interval"),
    ({"bf_interval": 0}, r"slurm: SimConfig.bf_interval must be a whole number >= 1, got 0"),
    ({"node_procs": 2.5}, r"slurm: SimConfig.node_procs must be a whole number >= 0"),
])
def test_a_bad_slurm_entry_is_one_error_naming_the_key(given, message):
    with pytest.raises(ValueError, match=message):
        RLSchedulerEnvConfig.from_dict({"backfill": "slurm", "slurm": given})


def test_slurm_parameters_under_another_backfilling_are_refused():
    with pytest.raises(ValueError, match=r"slurm: bf_resolution given, but they apply only to backfill slurm"):
        LinearEnvConfig.from_dict({"backfill": "easy", "slurm": {"bf_resolution": 600}})
    assert check_slurm_site("easy", {}) == {} and set(SLURM_SITE) == set(SITE)
