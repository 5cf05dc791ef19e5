"""Importing schedrl (and running `schedrl traces`) must not pull in the heavy RL stack (gymnasium is
fine: `import schedrl` registers the envs)."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("torch", "ray")

PROBE = """
import json, sys
import schedrl, schedrl.workload, schedrl.cli.main
import schedrl.workload.catalog, schedrl.cli.traces
from schedrl.cli.main import main
main(["traces", "list", "--json"])
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r})))
"""


def test_import_schedrl_does_not_load_torch_or_ray():
    result = subprocess.run([sys.executable, "-c", PROBE.format(heavy=set(HEAVY))],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


# ---------------------------------------------------------------- layering (docs/architecture.md)

LAYERING_PROBE = """
import importlib, json, sys
for name in {modules!r}:
    importlib.import_module(name)
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "ray"))))
"""


def _heavy_modules_loaded_by(modules: list[str]) -> list[str]:
    result = subprocess.run([sys.executable, "-c", LAYERING_PROBE.format(modules=modules)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_shared_layers_import_no_ray_or_torch():
    assert _heavy_modules_loaded_by(["schedrl.workload", "schedrl.sim", "schedrl.heuristics", "schedrl.metrics",
                                     "schedrl.agents", "schedrl.agents.base", "schedrl.agents.checkpoint",
                                     "schedrl.envs", "schedrl.dtsim"]) == []


def _agent_light_modules() -> list[str]:
    """Every agent's config/env/observation modules and its Agent class module (which `--help` imports)."""
    import importlib.util

    from schedrl.agents import AGENTS, agent_package

    modules = []
    for name, package in AGENTS.items():
        modules.append(agent_package(name).AGENT.partition(":")[0])
        for sub in ("config", "env", "observation"):
            if importlib.util.find_spec(f"{package}.{sub}") is not None:
                modules.append(f"{package}.{sub}")
    return sorted(set(modules))


def test_agent_configs_envs_observations_and_agent_classes_import_no_ray_or_torch():
    modules = _agent_light_modules()
    assert "schedrl.agents.rlscheduler.env" in modules
    assert _heavy_modules_loaded_by(modules) == []


def test_nothing_outside_an_agent_package_imports_its_modules():
    """An agent is one folder: the shared driver, evaluation, CLI and other agents know it only through
    the registry (`schedrl.agents.AGENTS`) and the contract, never by importing its modules."""
    import ast
    from pathlib import Path

    from schedrl.agents import AGENTS

    root = Path(__file__).resolve().parents[1] / "schedrl"
    packages = sorted(AGENTS.values(), key=len, reverse=True)
    violations = []
    for path in root.rglob("*.py"):
        module = ".".join(path.relative_to(root.parent).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                owner = next((p for p in packages if name == p or name.startswith(p + ".")), None)
                if owner and name != owner and not (module == owner or module.startswith(owner + ".")):
                    violations.append(f"{module} imports {name}")
    assert violations == []


def test_agent_subcommands_come_from_the_registry():
    from schedrl.agents import agent_commands
    from schedrl.cli.main import FORWARDED, SUBCOMMANDS

    commands = agent_commands()
    assert commands["mrsch"][0] == "schedrl.agents.mrsch.goals"
    for name, (module, help_text) in commands.items():
        assert FORWARDED[name] == module and SUBCOMMANDS[name] == ("schedrl.cli.forward", help_text)
