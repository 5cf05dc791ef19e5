"""Training recipes: a named, versioned set of `schedrl train AGENT` options with the result it gave and its source.

A recipe is a YAML file under `schedrl/training/recipes/` (shipped with the package): `name`, `version`, `agent`,
`summary`, `options` (option name without `--` -> value; `true` for a flag) and `result`: the `command` that gave it,
and either `text` with the `quotes` of its `source` page that the text restates (tests/training/test_recipes.py
checks each quote is in the source, verbatim) or `leaderboard` (a policy and scenario of docs/leaderboard.json, whose
row is read when the recipe is shown). `schedrl train AGENT --recipe NAME` puts the recipe's options before the ones
given, so options given on the command line override the recipe's, and the run records the expanded command.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from schedrl import yamlfile

RECIPES_DIR = Path(__file__).resolve().parent / "recipes"
"""Where the shipped recipes live (one NAME.yaml each)."""
REPO = Path(__file__).resolve().parents[2]
"""The repository a result's source path is relative to (a source file absent in an installed package is said so)."""
KEYS = frozenset({"name", "version", "agent", "summary", "options", "result"})
RESULT_KEYS = frozenset({"command", "text", "quotes", "leaderboard", "source"})


class RecipeError(ValueError):
    """An unknown recipe or a recipe file that does not read; the message names the file and the key."""


@dataclass(frozen=True)
class Recipe:
    """One recipe file, checked."""

    name: str
    version: int
    agent: str
    summary: str
    options: tuple[tuple[str, Any], ...]
    """(option without `--`, value) in the file's order; True: a flag."""
    result: Mapping[str, Any] = field(default_factory=dict)
    path: Path | None = None

    def arguments(self) -> list[str]:
        """The options as command-line arguments (`--teacher hindsight --lr 1e-8 ...`)."""
        out: list[str] = []
        for key, value in self.options:
            out += [f"--{key}"] if value is True else [f"--{key}", str(value)]
        return out

    def command(self) -> str:
        """The command `schedrl train AGENT --recipe NAME` expands to, before the options given with it."""
        return " ".join(["schedrl", "train", self.agent, *self.arguments()])

    def result_lines(self, leaderboard: Path | None = None) -> list[str]:
        """What the recipe gave: the command, the result (read from the leaderboard where it names a row) and the
        source."""
        lines = [f"ran: {self.result['command']}"] if self.result.get("command") else []
        if "leaderboard" in self.result:
            lines.append(f"gave: {leaderboard_result(self.result['leaderboard'], leaderboard)}")
        elif self.result.get("text"):
            lines.append(f"gave: {self.result['text']}")
        if self.result.get("source"):
            lines.append(f"source: {self.result['source']}")
        return lines


def _check(data: Any, path: Path) -> Recipe:
    if not isinstance(data, dict):
        raise RecipeError(f"{path}: a recipe is a mapping of {', '.join(sorted(KEYS))}")
    unknown = sorted(set(data) - KEYS)
    missing = sorted({"name", "version", "agent", "options"} - set(data))
    if unknown or missing:
        raise RecipeError(f"{path}: " + "; ".join(([f"unknown key {', '.join(unknown)}"] if unknown else [])
                                                  + ([f"missing {', '.join(missing)}"] if missing else [])))
    if data["name"] != path.stem:
        raise RecipeError(f"{path}: name {data['name']!r} is not the file's name {path.stem!r}")
    if not isinstance(data["version"], int) or data["version"] < 1:
        raise RecipeError(f"{path}: version must be a whole number >= 1, got {data['version']!r}")
    options = data["options"]
    if not isinstance(options, dict) or not options:
        raise RecipeError(f"{path}: options must be a mapping of option -> value")
    for key, value in options.items():
        if not isinstance(key, str) or key.startswith("-") or value is None or value is False \
                or isinstance(value, (list, dict)):
            raise RecipeError(f"{path}: options.{key}: an option name without '--' and one value (true for a flag)")
    result = data.get("result") or {}
    if not isinstance(result, dict) or set(result) - RESULT_KEYS:
        raise RecipeError(f"{path}: result: keys {', '.join(sorted(RESULT_KEYS))}")
    return Recipe(str(data["name"]), int(data["version"]), str(data["agent"]), " ".join(str(data.get("summary",
                  "")).split()), tuple(options.items()), result, path)


def read(path: Path) -> Recipe:
    """A recipe file, checked (RecipeError naming the file and key)."""
    try:
        return _check(yamlfile.load(path.read_text()), path)
    except (OSError, ValueError) as e:
        if isinstance(e, RecipeError):
            raise
        raise RecipeError(f"{path}: {e}") from None


def recipes(directory: Path = RECIPES_DIR) -> dict[str, Recipe]:
    """Every shipped recipe by name."""
    return {p.stem: read(p) for p in sorted(directory.glob("*.yaml"))}


def get_recipe(name: str, agent: str | None = None, directory: Path = RECIPES_DIR) -> Recipe:
    """The recipe `name` (for `agent`, where given); RecipeError with the names there are."""
    found = recipes(directory)
    if name not in found:
        import difflib

        close = difflib.get_close_matches(name, list(found), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise RecipeError(f"unknown recipe {name!r}{hint}; `schedrl recipes list` shows them: {', '.join(found)}")
    recipe = found[name]
    if agent is not None and recipe.agent != agent:
        raise RecipeError(f"recipe {name!r} is for `schedrl train {recipe.agent}`, not {agent}")
    return recipe


def leaderboard_result(where: Mapping[str, str], path: Path | None = None) -> str:
    """A policy's row on a scenario of the committed board, in one line: its mean, the reference's, the paired
    interval and the verdict, uncorrected and corrected for multiple comparisons (as the board states them)."""
    path = path or REPO / "docs" / "leaderboard.json"
    try:
        board = json.loads(path.read_text())
    except OSError:
        return f"the board's row of {where['policy']} on {where['scenario']} ({path} is not here)"
    scenario = next((s for s in board["scenarios"] if s["scenario"] == where["scenario"]), None)
    row = next((r for r in (scenario or {}).get("rows", []) if r["method"] == where["policy"]), None)
    if row is None or "vs_reference" not in row:
        raise RecipeError(f"{path}: no row of {where['policy']} on {where['scenario']}")
    reference = next(r for r in scenario["rows"] if r["method"] == scenario["reference"])
    vs = row["vs_reference"]
    low, high = vs["ci95_pct"]
    corrected = vs.get("verdict_corrected")
    correction = board.get("correction", {}).get("method", "the board's correction")
    return (f"{where['policy']} {row['mean']:.2f} vs {scenario['reference']} {reference['mean']:.2f} on "
            f"{where['scenario']}'s {vs['independent']} held-out windows ({scenario['metric']}): "
            f"{vs['difference_pct']:+.1f}% [{low:+.1f}, {high:+.1f}], {vs['verdict']} (not corrected)"
            + (f", {corrected} ({correction}-corrected)" if corrected else ""))
