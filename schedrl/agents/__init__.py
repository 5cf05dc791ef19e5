"""Agents: one package per RL scheduler, each behind the `Agent` contract (`schedrl.agents.base`).

`AGENTS` is the registry: agent name -> the package that holds it. A package's `__init__` is cheap
(no ray, torch or gymnasium) and names its env(s) in `ENVS` and its `Agent` class in `AGENT`
("module:Class"; a package holding several agents maps each name to its class in `AGENTS`);
`schedrl.registration` registers the envs, `get_agent` imports the class. A package may also contribute
`schedrl` subcommands of its own paper's tools in `COMMANDS` (name -> (module with `main(argv)`,
one-line help)); `schedrl.cli.main` finds them through `agent_commands`. Adding an agent is its package plus
one line here (docs/architecture.md).
"""

from __future__ import annotations

import importlib
from types import ModuleType

AGENTS: dict[str, str] = {
    "rlscheduler": "schedrl.agents.rlscheduler",
    "dras-pg": "schedrl.agents.dras",
    "dras-dql": "schedrl.agents.dras",
    "decima-pg": "schedrl.agents.dras",
    "mrsch": "schedrl.agents.mrsch",
    "mrsch-scalar": "schedrl.agents.mrsch.scalar",
    "linear": "schedrl.agents.linear",
    "inspector": "schedrl.agents.inspector",
    "rl-backfill": "schedrl.agents.rlbackfill",
    "rlschert": "schedrl.agents.rlschert",
    "deeprm": "schedrl.agents.rlschert",
}


def agent_package(name: str) -> ModuleType:
    """The package of agent `name` (cheap to import)."""
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; choose one of {', '.join(AGENTS)}")
    return importlib.import_module(AGENTS[name])


def get_agent(name: str):
    """An instance of agent `name`'s `Agent` class."""
    package = agent_package(name)
    module, _, cls = getattr(package, "AGENTS", {}).get(name, package.AGENT).partition(":")
    return getattr(importlib.import_module(module), cls)()


def env_entry_points() -> dict[str, tuple[str, str | None]]:
    """Every agent's env ids -> (entry point, vector entry point or None)."""
    out: dict[str, tuple[str, str | None]] = {}
    for name in AGENTS:
        out.update(agent_package(name).ENVS)
    return out


def agent_commands() -> dict[str, tuple[str, str]]:
    """The `schedrl` subcommands agents contribute: name -> (module with `main(argv) -> int`, one-line help)."""
    out: dict[str, tuple[str, str]] = {}
    for package in dict.fromkeys(AGENTS.values()):
        for name, entry in getattr(importlib.import_module(package), "COMMANDS", {}).items():
            if name in out:
                raise ValueError(f"two agent packages define the subcommand {name!r}")
            out[name] = entry
    return out
