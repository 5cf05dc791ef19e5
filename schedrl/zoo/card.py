"""The model card of an exported policy: what it was trained on and with, what it is valid for, and the warning
printed when it is used outside that.

The card's fields go into `policy.json` (`card`), the zoo's manifest and a `README.md` beside the weights. A policy
is valid for the machine of its training trace (the simulator's resources and capacities at its first decision) and
for jobs inside its normalisation (requested times up to the training trace's longest, `time_scale`, where its time
features saturate); `guard` makes a loaded policy say so on stderr, once, when a simulation leaves either.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

DECISIONS = ("defer", "pick", "backfill", "kill", "act")
"""A policy's decision methods (`schedrl.agents.base.SchedulingPolicy`; `act` on the discrete-time cluster)."""
NONE = "none"
"""A card field with nothing to say (an older run record has no scenario; an agent without normalisation)."""


def machine_of(sim) -> dict[str, float]:
    """The machine a simulation runs: each resource's capacity (the event simulator) or the units of the
    discrete-time cluster."""
    if hasattr(sim, "resources") and hasattr(sim, "state"):
        return {name: float(c) for name, c in zip(sim.resources, sim.state.cap)}
    return {"units": float(sim.config.res_slot)}


def scenario_of(record: Mapping[str, Any]) -> dict[str, str] | str:
    scenario = record.get("scenario")
    if not scenario:
        return NONE
    from schedrl.scenarios.scenario import recorded_sha256
    return {"name": scenario["name"], "sha256": recorded_sha256(scenario)}


def command_of(record: Mapping[str, Any]) -> str:
    """The training command as a user types it (`schedrl train AGENT ...`; a sweep trial: the `schedrl tune` line),
    without the absolute paths of the machine it ran on: the output directory (`--out`), which changes nothing
    trained, is given by its name."""
    if record.get("train_args"):
        command = ["schedrl", "train", *record["train_args"]]
    else:
        command = list(record.get("command") or [])
    if not command:
        return NONE
    if Path(command[0]).name in ("schedrl", "__main__.py"):
        command[0] = "schedrl"
    for i, arg in enumerate(command):
        if arg.startswith("--out=") and Path(arg[6:]).is_absolute():
            command[i] = f"--out={Path(arg[6:]).name}"
        elif arg == "--out" and i + 1 < len(command) and Path(command[i + 1]).is_absolute():
            command[i + 1] = Path(command[i + 1]).name
    return shlex.join(command)


def budget_of(checkpoint: Path) -> dict[str, Any]:
    """Iterations, env steps and seconds of training up to `checkpoint` (a Tune trial's `checkpoint_*` directory),
    read from its trial's `result.json`; None where unknown."""
    import pickle

    budget: dict[str, Any] = {"iterations": None, "env_steps": None, "seconds": None}
    try:  # the checkpoint is a pickle already trusted to load its module; its iteration is in the algorithm state
        with open(checkpoint / "algorithm_state.pkl", "rb") as fh:
            budget["iterations"] = int(pickle.load(fh)["training_iteration"])
        rows = [json.loads(line) for line in (checkpoint.parent / "result.json").read_text().splitlines() if line]
    except (OSError, KeyError, TypeError, ValueError, pickle.UnpicklingError, EOFError, ModuleNotFoundError):
        return budget
    row = next((r for r in rows if r.get("training_iteration") == budget["iterations"]), None)
    if row is not None:
        budget["env_steps"] = row.get("num_env_steps_sampled_lifetime")
        budget["seconds"] = row.get("time_total_s")
    return budget


def git_commit() -> str:
    """The commit of the schedrl source tree exporting (`unknown` outside a git checkout)."""
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent, capture_output=True,
                              text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else "unknown"


def make(record: Mapping[str, Any], *, machine: Mapping[str, float], validation: Mapping[str, Any],
         budget: Mapping[str, Any], precision: Mapping[str, Any]) -> dict[str, Any]:
    """The card's fields of a policy trained under run record `record` (a dict)."""
    from schedrl import __version__

    env = record.get("env_config") or {}
    return {"agent": record["agent"], "model": record.get("model"), "scenario": scenario_of(record),
            "seed": (record.get("settings") or {}).get("seed"), "command": command_of(record), "budget": dict(budget),
            "trace": {"name": env.get("trace", env.get("jobs", NONE)), "sha256": record.get("trace_sha256") or NONE},
            "machine": dict(machine), "normalisation": env.get("norm") or NONE, "validation": dict(validation),
            "precision": dict(precision),
            "schedrl_version": (record.get("versions") or {}).get("schedrl", "unknown"),
            "exported_with": __version__, "git_commit": git_commit()}


def _number(value) -> str:
    return "?" if value is None else f"{value:,.0f}" if float(value) == int(value) else f"{value:,.2f}"


def markdown(exported) -> str:
    """The card of an exported policy (`schedrl.zoo.store.Exported`) as Markdown (its directory's README.md)."""
    card, weights = exported.card, exported.data["weights"]
    scenario = card["scenario"]
    val = card["validation"]
    budget = card["budget"]
    heuristics = val.get("heuristics") or {}
    best = (min if val.get("lower_is_better", True) else max)(heuristics, key=heuristics.get) if heuristics else None
    rows = [
        ("agent", card["agent"] + (f" (network {card['model']})" if card.get("model") else "")),  # one-network agents: None
        ("scenario", NONE if scenario == NONE else f"{scenario['name']} (definition sha256 {scenario['sha256']})"),
        ("training trace", f"{card['trace']['name']} (sha256 {card['trace']['sha256']})"),
        ("machine it is valid for", ", ".join(f"{k} {_number(v)}" for k, v in card["machine"].items())),
        ("normalisation", NONE if card["normalisation"] == NONE else
         ", ".join(f"{k} {v}" for k, v in card["normalisation"].items())),
        ("seed", str(card["seed"])),
        ("budget", f"{_number(budget['iterations'])} iterations, {_number(budget['env_steps'])} env steps, "
                   f"{_number(budget['seconds'])} s"),
        ("validation score", f"{NONE} (its run had no validation sequences)" if val["score"] is None else
         f"{val['metric']} {val['score']:.4g} (mean of {val['sequences']} sequences of {val['length']} jobs)"
         + (f"; best heuristic {best} {val['heuristics'][best]:.4g}" if best else "")),
        ("weights", f"{weights['file']}: {weights['bytes']:,} bytes, {weights['parameters']:,} parameters, "
                    f"{weights['precision']}, sha256 {weights['sha256']}"),
        ("precision", card["precision"]["why"]),
        ("schedrl", f"trained with {card['schedrl_version']}; exported with {card['exported_with']} at commit "
                    f"{card['git_commit']}"),
    ]
    stored = ("tensors only in the safetensors format (no pickle container: no code runs when it loads)"
              if weights["file"].endswith(".safetensors") else
              "tensors only (read with `torch.load(weights_only=True)`, a restricted pickle; `schedrl zoo convert` "
              "rewrites it as safetensors)")
    lines = [f"# {exported.name}", "", f"A trained `{card['agent']}` policy, exported by `schedrl export`: "
             f"`{Path(weights['file']).name}` holds {stored} and the network needs torch and numpy, not ray.", "",
             "| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in rows]
    lines += ["", "Training command:", "", f"    {card['command']}", "",
              f"Use it as `zoo:{exported.name}` (or its directory) wherever a checkpoint is accepted: "
              f"`schedrl evaluate zoo:{exported.name}`, `schedrl compare --policies zoo:{exported.name}`, "
              f"`schedrl simulate --policy zoo:{exported.name}`. On another machine size, or on jobs requesting more "
              "time than its normalisation's `time_scale`, it warns on stderr.", ""]
    return "\n".join(lines)


def problems(card: Mapping[str, Any], sim) -> dict[str, str]:
    """Why simulation `sim` is outside what the card's policy is valid for, by kind (`machine`, `normalisation`);
    empty inside."""
    out = {}
    machine = machine_of(sim)
    trained = {k: float(v) for k, v in card["machine"].items()}
    if machine != trained:
        def show(m):
            return ", ".join(f"{k} {_number(v)}" for k, v in m.items())
        out["machine"] = f"it was trained on a machine of {show(trained)}; this simulation has {show(machine)}"
    norm = card.get("normalisation")
    requested = getattr(getattr(sim, "workload", None), "time_req", None)
    if isinstance(norm, Mapping) and "time_scale" in norm and requested is not None:
        beyond = int((requested > float(norm["time_scale"])).sum())
        if beyond:
            out["normalisation"] = (f"{beyond} of {len(requested)} jobs request more than {float(norm['time_scale']):,.0f} "
                                    "s, the longest request of its training trace (outside its normalisation: its time "
                                    "features saturate)")
    return out


def guard(policy, card: Mapping[str, Any], warn: Callable[[str], None] | None = None) -> None:
    """Make `policy`'s decision methods check each new simulation against the card and warn (stderr), once per kind
    of problem, where it is used outside the machine or normalisation it was trained for."""
    warn = warn or (lambda text: print(text, file=sys.stderr, flush=True))
    seen: set[str] = set()
    last: list = [None]

    def checked(method):
        def decide(sim, *args, **kwargs):
            if sim is not last[0]:
                last[0] = sim
                for kind, problem in problems(card, sim).items():
                    if kind not in seen:
                        seen.add(kind)
                        warn(f"schedrl: warning: {getattr(policy, 'name', 'the policy')}: {problem}")
            return method(sim, *args, **kwargs)
        return decide

    for name in DECISIONS:
        method = getattr(policy, name, None)
        if callable(method):
            setattr(policy, name, checked(method))
