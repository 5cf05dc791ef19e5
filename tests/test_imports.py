"""Importing schedrl (and running `schedrl traces`) must not pull in the heavy RL stack (gymnasium is
fine: `import schedrl` registers the envs)."""

from __future__ import annotations

import ast
import functools
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

HEAVY = ("torch", "ray")

PROBE = """
import json, sys
import schedrl, schedrl.workload, schedrl.cli.main
import schedrl.workload.catalog, schedrl.cli.traces
from schedrl.cli.main import main
main(["traces", "list", "--json"])
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r})))
"""


@pytest.mark.integration  # a fresh interpreter checks the imports
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


def _ray_free_modules() -> list[str]:
    """Every module of the layers schedrl/layers.py declares free of ray and torch."""
    from schedrl.layers import layer_of

    return sorted(module for module, path in _module_files().items()
                  if not module.endswith("__main__") and (layer := layer_of(_relative(path))) and layer.ray_free)


@pytest.mark.integration  # a fresh interpreter checks the imports
def test_shared_layers_import_no_ray_or_torch():
    modules = _ray_free_modules()
    assert {"schedrl.workload.swf", "schedrl.sim.engine", "schedrl.scenarios.judge", "schedrl.envs"} <= set(modules)
    assert _heavy_modules_loaded_by(modules + ["schedrl.agents", "schedrl.agents.base",
                                               "schedrl.agents.checkpoint"]) == []


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


@pytest.mark.integration  # a fresh interpreter checks the imports
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


# ---------------------------------------------------------------- layers point one way (read from the source)
#
# Every module under schedrl/ is parsed (ast): its imports, those inside functions included, are edges between
# modules. The layers and what each may import are schedrl/layers.py's map (docs/architecture.md shows it); the
# rules below are the finer ones inside a layer, each with its reason; an allowance names the exact edge it lets
# through.

SCHEDRL = Path(__file__).resolve().parents[1] / "schedrl"


@dataclass(frozen=True)
class Rule:
    """Modules under `importer` import no module under `imported` (dotted prefixes)."""

    importer: str
    imported: str
    reason: str


@dataclass(frozen=True)
class Allowance:
    """The edge `importer` -> `imported` (exact modules) stands despite the rules and the cycle check."""

    importer: str
    imported: str
    reason: str


RULES = [
    Rule("schedrl.training.callbacks", "schedrl.training.report",
         "the callbacks run inside every trial and the reports after the sweep: neither needs the other; what both "
         "read is schedrl.agents.trial_keys"),
    Rule("schedrl.training.report", "schedrl.training.callbacks",
         "as above: the reports read finished results, not the code that wrote them (which imports ray)"),
]

ALLOWANCES: list[Allowance] = []

ROOT_NAMES = {"__version__"}
"""What any module may read from the root package (`from schedrl import __version__`): set in schedrl/__init__.py
before it imports anything, so reading it is no dependency on the envs the root registers."""

REGISTRY = "schedrl.agents"
REGISTRY_NAMES = {"AGENTS", "get_agent", "agent_package", "env_entry_points", "agent_commands"}
REGISTRY_USERS = {
    "schedrl.registration": "registers every agent's envs with gymnasium (`import schedrl` runs it)",
    "schedrl.cli": "names agents on the command line; lists and forwards the agents' own subcommands",
    "schedrl.training": "builds the agent a sweep or a trial names (sweep_file, sweep, driver, callbacks)",
    "schedrl.eval": "builds the agent a checkpoint's run record names (select, methods)",
    "schedrl.slurm": "the live Slurm adapter reads which machine a trained policy's agent trained for (order)",
    "schedrl.agents.checkpoint": "`load_policy`: the agent of any checkpoint, from its run record",
    "schedrl.agents.mrsch.goals": "MRSch's goal tool reads `mrsch` and `mrsch-scalar` checkpoints alike",
    "schedrl.agents.rlschert.sweep": "a dtsim sweep method reads `rlschert` and `deeprm` checkpoints alike",
}
"""Who may import the registry (`schedrl.agents`: AGENTS, get_agent, ...), each because it must know every agent or
the agent a name, a file or a checkpoint gives; the layers below (simulators, metrics, heuristics) never do."""


def _module_files() -> dict[str, Path]:
    files = {}
    for path in SCHEDRL.rglob("*.py"):
        parts = path.relative_to(SCHEDRL.parent).with_suffix("").parts
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return files


def _relative(path: Path) -> str:
    """`schedrl/workload/swf.py` -> `workload/swf.py`, as schedrl/layers.py names files."""
    return path.relative_to(SCHEDRL).as_posix()


def _layers() -> dict[str, str]:
    """module -> the name of its layer (schedrl/layers.py); every module has one (checked below)."""
    from schedrl.layers import layer_of

    return {module: layer.name for module, path in _module_files().items() if (layer := layer_of(_relative(path)))}


def _owner(name: str, modules) -> str | None:
    """The module `name` is, or lives in (`schedrl.eval.paired.t975` -> `schedrl.eval.paired`)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


@functools.cache
def _imports() -> dict[str, dict[str, set[str]]]:
    """module -> {imported module -> names imported from it (empty for `import x`)}, every schedrl import."""
    modules = _module_files()
    graph: dict[str, dict[str, set[str]]] = {}
    for module, path in modules.items():
        edges = graph.setdefault(module, {})
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ImportFrom) and node.level:
                package = module if path.name == "__init__.py" else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = f"{package}.{node.module}" if node.module else package
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    target = _owner(alias.name, modules) if alias.name.startswith("schedrl") else None
                    if target and target != module:
                        edges.setdefault(target, set())
                continue
            else:
                continue
            if not base.startswith("schedrl") or (base == "schedrl" and {a.name for a in node.names} <= ROOT_NAMES):
                continue
            for alias in node.names:  # `from schedrl.eval import paired` imports the module schedrl.eval.paired
                target = _owner(f"{base}.{alias.name}", modules)
                if target and target != module:
                    edges.setdefault(target, set()).add(alias.name)
    return graph


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _edges() -> set[tuple[str, str]]:
    return {(a, b) for a, targets in _imports().items() for b in targets}


def _allowed(edge: tuple[str, str]) -> bool:
    return any(edge == (a.importer, a.imported) for a in ALLOWANCES)


def _package(module: str) -> str:
    """The top-level package (or top-level module) of `module`: schedrl.training.sweep -> training."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else module


def test_the_import_graph_sees_function_level_and_submodule_imports():
    edges = _edges()
    assert ("schedrl.training.sweep", "schedrl.agents") in edges  # `from schedrl.agents import get_agent` in a method
    assert ("schedrl.training.report", "schedrl.eval.paired") in edges  # `from schedrl.eval import paired`
    assert ("schedrl.registration", "schedrl.agents") in edges


def test_the_layer_map_is_consistent_and_names_every_module():
    from schedrl.layers import LAYERS, problems

    assert problems() == []
    layers = _layers()
    assert sorted(set(_module_files()) - set(layers)) == [], "a module no layer of schedrl/layers.py holds"
    assert {layers["schedrl.dtsim.__main__"], layers["schedrl.dtsim.cluster"]} == {"entry points", "dtsim"}
    assert [layer.name for layer in LAYERS if not any(name == layer.name for name in layers.values())] == []


def _layer_violations(edges) -> list[str]:
    from schedrl.layers import by_name

    layers, allowed = _layers(), {name: set(layer.may_import) for name, layer in by_name().items()}
    return [f"{a} ({layers[a]}) imports {b} ({layers[b]}): the layer map (schedrl/layers.py) lets {layers[a]} "
            f"import {', '.join(sorted(allowed[layers[a]])) or 'nothing of schedrl'}"
            for a, b in sorted(edges) if not _allowed((a, b))
            and layers[a] != layers[b] and layers[b] not in allowed[layers[a]]]


def test_every_import_goes_to_its_own_layer_or_one_it_may_import():
    assert _layer_violations(_edges()) == []


def test_the_layer_check_sees_a_forbidden_import():
    """The check above is not vacuous: the map forbids what the old rules did."""
    from schedrl.layers import by_name

    assert _layer_violations({("schedrl.agents.base", "schedrl.eval.paired"),
                              ("schedrl.sim.engine", "schedrl.sim.state")}) == [
        "schedrl.agents.base (agents) imports schedrl.eval.paired (eval): the layer map (schedrl/layers.py) lets "
        "agents import base, dtsim, envs, heuristics, metrics, scenarios, sim, workload, zoo"]
    layers = by_name()
    assert "eval" not in layers["agents"].may_import and "training" not in layers["agents"].may_import
    assert "agents" not in layers["dtsim"].may_import and "cli" not in layers["scenarios"].may_import
    rl = {"envs", "agents", "training", "eval", "cli"}
    for low in ("workload", "sim", "dtsim", "heuristics", "metrics", "scenarios"):
        assert not rl & set(layers[low].may_import), low


def test_no_module_imports_what_a_rule_forbids():
    violations = [f"{a} imports {b}: {rule.reason}" for a, b in sorted(_edges()) if not _allowed((a, b))
                  for rule in RULES if _under(a, rule.importer) and _under(b, rule.imported)]
    assert violations == []


def test_every_allowance_is_still_needed():
    """An allowance whose edge is gone is removed with it (a temporary one, once its fix lands)."""
    edges = _edges()
    assert [a for a in ALLOWANCES if (a.importer, a.imported) not in edges] == []


def test_no_import_cycles_between_packages_or_modules():
    """The top-level packages (workload, sim, dtsim, heuristics, metrics, envs, agents, predict, training, eval, cli,
    ...) import each other one way only, and so do modules, except through the allowances above."""
    edges = {e for e in _edges() if not _allowed(e)}
    layers = _layers()
    # an entry point inside a package (dtsim/__main__.py) is of the layer above, not of its folder's package
    for name, key in (("packages", lambda m: (layers[m], _package(m))), ("modules", lambda m: m)):
        graph: dict[str, set[str]] = {}
        for a, b in edges:
            if key(a) != key(b):
                graph.setdefault(key(a), set()).add(key(b))
        cycles = [sorted(c) for c in _strongly_connected(graph) if len(c) > 1]
        witnesses = {c[0]: sorted(f"{a} -> {b}" for a, b in edges if key(a) in c and key(b) in c and key(a) != key(b))
                     for c in cycles}
        assert cycles == [], f"import cycles between {name}: {witnesses}"


def test_the_registry_is_imported_only_where_every_agent_must_be_known():
    users = sorted(module for module, targets in _imports().items()
                   if targets.get(REGISTRY, set()) & REGISTRY_NAMES or (REGISTRY in targets and not targets[REGISTRY]))
    assert "schedrl.registration" in users and "schedrl.training.driver" in users
    assert [m for m in users if not any(_under(m, prefix) for prefix in REGISTRY_USERS)] == []


def _strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components of `graph`."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                component.add(w)
                if w == v:
                    break
            components.append(component)

    for v in list(graph):
        if v not in index:
            visit(v)
    return components
