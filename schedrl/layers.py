"""The layer map of schedrl, bottom to top: one list that `tests/test_imports.py` checks every import against and that
docs/architecture.md shows (`python -m schedrl.layers --write` renders it there; `tests/docs/test_layers_page.py`
fails when the page and this list differ).

Each layer holds files and folders under `schedrl/` and names the layers below it that it may import (its own files
import each other freely, one way: the import test refuses cycles). A file belongs to the layer naming the longest
path that holds it, so `dtsim/__main__.py`, an entry point, sits above the simulator whose folder holds it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

START, END = "<!-- layers:start -->", "<!-- layers:end -->"


@dataclass(frozen=True)
class Layer:
    name: str
    paths: tuple[str, ...]
    """Files and folders under schedrl/ (`workload`, `jit.py`, `dtsim/__main__.py`)."""
    may_import: tuple[str, ...]
    """The layers below this one that its modules may import, by name."""
    holds: str
    ray_free: bool = False
    """Importing any of its modules loads neither ray nor torch (checked by tests/test_imports.py)."""


LAYERS: tuple[Layer, ...] = (
    Layer("base", ("jit.py", "outputs.py", "yamlfile.py", "duration.py", "paths.py", "numbers.py", "bounded.py",
                   "layers.py"), (),
          "numba compilation with a cache that cannot go stale (`njit`); where a command's outputs go (`claim`, "
          "atomic writes); YAML as schedrl reads it; every "
          "duration (command lines, sweep files, Slurm's times); the path variables (`SCHEDRL_*`, relative to where "
          "the process started); numbers as options and files give them (finite, bounded); files read within a "
          "stated size and line length; this map", ray_free=True),
    Layer("workload", ("workload",), ("base",),
          "SWF I/O, cleaning + report, catalog, generators, samplers, augmentation; sacct/sinfo import; numpy "
          "and numba", ray_free=True),
    Layer("sim", ("sim",), ("base", "workload"),
          "the compiled event-driven simulator; SimConfig and its presets; Slurm's backfill parameters as "
          "`scontrol show config` gives them (slurmconf.py)", ray_free=True),
    Layer("metrics", ("metrics",), ("base", "workload", "sim"),
          "per-job and aggregate metrics", ray_free=True),
    Layer("dtsim", ("dtsim",), ("base",),
          "the discrete-time cluster of DeepRM/RLSchert (canvas, kills)", ray_free=True),
    Layer("heuristics", ("heuristics",), ("base", "workload", "sim", "metrics"),
          "compiled priority keys and packing rules (FCFS ... Optimization), tuned rules, the base rules of the "
          "inspector and learned backfilling", ray_free=True),
    Layer("scenarios", ("scenarios",), ("base", "workload", "sim", "metrics", "dtsim", "heuristics"),
          "what a policy is trained and judged on: workload spec, split, sequences, metric, baselines, reference; "
          "the standard scenarios; scoring on either simulator; judge.py: the protocol an agent's env config "
          "implies (Agent.judge)", ray_free=True),
    Layer("predict", ("predict",), ("base", "workload"),
          "runtime predictors (SWF remaining-runtime model and its baselines; torch)"),
    Layer("envs", ("envs",), ("base", "workload", "sim", "scenarios"),
          "shared env pieces (episodes, masked spaces, settings, rendering, the event-simulator env base, the time "
          "normalisation saved with checkpoints)", ray_free=True),
    Layer("zoo", ("zoo",), ("base", "heuristics", "scenarios"),
          "the model zoo's file format (safetensors weights, policy.json, manifest) and its shipped policies and "
          "tuned rules"),
    Layer("agents", ("agents",), ("base", "workload", "sim", "metrics", "dtsim", "heuristics", "scenarios", "envs",
                                  "zoo"),
          "base.py (the contract), checkpoint.py (run record, load any checkpoint), the registry, one package per "
          "agent: rlscheduler/, dras/, mrsch/, rlschert/, inspector/, rlbackfill/, linear/ (the example); baserule/: "
          "what the inspector and rlbackfill share"),
    Layer("registration", ("registration.py",), ("agents",),
          "registers every agent's env with gymnasium (`import schedrl` runs it)"),
    Layer("bound", ("bound",), ("base", "workload", "sim", "metrics", "heuristics", "scenarios"),
          "the offline optimum of a window (`schedrl bound`): the clairvoyant problem and its replay through the "
          "metric code, solver-free lower bounds, the Lagrangian and LP lower bounds (numpy; HiGHS through highspy "
          "and SciPy), the CP-SAT model (OR-Tools, imported lazily), the serial schedule-generation scheme (and the "
          "clairvoyant orders' warm starts), windows warm-started from the heuristics, the share of the gap a method closes",
          ray_free=True),
    Layer("eval", ("eval",), ("base", "workload", "sim", "metrics", "dtsim", "heuristics", "scenarios", "zoo",
                              "agents", "bound"),
          "evaluate (checkpoints' tables), compare, methods, crosstrace, paired, leaderboard, select, plots, tuned "
          "(a tuned rule's held-out table); policies resolved by name, object or checkpoint"),
    Layer("training", ("training",), ("base", "workload", "metrics", "scenarios", "agents", "eval"),
          "sweep files and SweepSpec, the one Tune driver, callbacks (validation, progress, restarts), reports"),
    Layer("slurm", ("slurm",), ("base", "workload", "sim", "metrics", "agents", "eval"),
          "the Slurm adapter: queue snapshots, a policy's order as bonuses, guard, lock, lease, audit log and why "
          "each moved job was placed, shadow report, go-live gate, live watchdog, replay"),
    Layer("cli", ("cli",), ("base", "workload", "sim", "metrics", "dtsim", "heuristics", "scenarios", "predict",
                            "envs", "zoo", "agents", "registration", "bound", "eval", "training", "slurm"),
          "thin: parse, call, print (one module per subcommand)"),
    Layer("entry points", ("__init__.py", "__main__.py", "api.py", "dtsim/__main__.py", "predict/__main__.py"),
          ("base", "workload", "predict", "registration", "eval", "cli"),
          "`import schedrl` (registers the envs), `python -m schedrl`, `python -m schedrl.dtsim`, "
          "`python -m schedrl.predict`; `schedrl.load_policy` and `schedrl.compare` (api.py, imported on first use)"),
)


def layer_of(path: str) -> Layer | None:
    """The layer of a file under schedrl/ (`workload/swf.py`, `__init__.py`): the one naming the longest path that
    holds it; None for a file no layer names."""
    best, length = None, -1
    for layer in LAYERS:
        for p in layer.paths:
            if (path == p or path.startswith(p.rstrip("/") + "/")) and len(p) > length:
                best, length = layer, len(p)
    return best


def by_name() -> dict[str, Layer]:
    return {layer.name: layer for layer in LAYERS}


def problems() -> list[str]:
    """What is wrong with the list itself: a name given twice, a layer importing one that is not below it."""
    out, seen = [], []
    for layer in LAYERS:
        if layer.name in seen:
            out.append(f"layer {layer.name!r} is named twice")
        for name in layer.may_import:
            if name not in seen:
                out.append(f"layer {layer.name!r} may import {name!r}, which is not a layer below it")
        seen.append(layer.name)
    paths = [p for layer in LAYERS for p in layer.paths]
    out += [f"{p} is in two layers" for p in sorted({p for p in paths if paths.count(p) > 1})]
    return out


def _paths(layer: Layer) -> str:
    return ", ".join(f"`schedrl/{p}`" for p in layer.paths)


def render() -> str:
    """The map as the markdown table docs/architecture.md shows between the layer markers."""
    names = [layer.name for layer in LAYERS]
    rows = ["| # | layer | files | may import | holds |", "|---|---|---|---|---|"]
    for i, layer in enumerate(LAYERS, 1):
        below = names[:i - 1]
        imports = ("every layer below" if below and list(layer.may_import) == below
                   else ", ".join(layer.may_import) or "nothing of schedrl")
        holds = layer.holds + (" (imports neither ray nor torch)" if layer.ray_free else "")
        rows.append(f"| {i} | **{layer.name}** | {_paths(layer)} | {imports} | {holds} |")
    return "\n".join(rows) + "\n"


def rendered_page(text: str) -> str:
    """`text` (docs/architecture.md) with the block between the layer markers replaced by `render()`."""
    i, j = text.find(START), text.find(END)
    if i < 0 or j < i:
        raise ValueError(f"the page has no {START} ... {END} block")
    return text[:i] + f"{START}\n{render()}{END}" + text[j + len(END):]


PAGE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


def main(argv: list[str] | None = None) -> int:
    """`python -m schedrl.layers` prints the table; `--write [PAGE]` renders it into docs/architecture.md."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print(render(), end="")
        return 0
    if argv[0] != "--write" or len(argv) > 2:
        print("usage: python -m schedrl.layers [--write [PAGE]]", file=sys.stderr)
        return 2
    page = Path(argv[1]) if len(argv) == 2 else PAGE
    try:
        text = page.read_text(encoding="utf-8")
        new = rendered_page(text)
    except (OSError, ValueError) as e:
        print(f"error: {page}: {e}", file=sys.stderr)
        return 2
    if new != text:
        page.write_text(new, encoding="utf-8")
        print(f"wrote the layer map into {page}")
    else:
        print(f"{page} already shows the layer map")
    return 0


if __name__ == "__main__":
    sys.exit(main())
