"""The shape of the zoo's JSON: every manifest entry, every `policy.json` and its card, checked field by field
before anything reads them, so that a malformed one is one `ZooError` naming the entry and the field (`zoo list`,
`zoo show`, `evaluate`, `compare` and the leaderboard all read through `schedrl.zoo.manifest` and
`schedrl.zoo.store`, which call `store.check_fields` first).

A spec is a type (`str`, `int`, `bool`, `dict`, `list`), `NUMBER` (int or float, not bool), `SHA256`, `RELATIVE`
(a relative path inside its directory), a `OneOf` of values, an `Optional` (None allowed), a `Missing` (the key
may be absent), an `Either` of specs, a `MapOf` (a mapping of names to one spec), a one-item list (a list of that
spec) or a dict of key -> spec (the
keys a JSON object must have; others are allowed, so that a newer writer may add fields).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

NUMBER = "number"
SHA256 = "sha256"
RELATIVE = "relative path"
_HEX = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class OneOf:
    values: tuple


@dataclass(frozen=True)
class Optional:
    spec: Any


@dataclass(frozen=True)
class Missing:
    """The key may be absent (when present, its value follows `spec`)."""

    spec: Any


@dataclass(frozen=True)
class Either:
    specs: tuple


@dataclass(frozen=True)
class MapOf:
    spec: Any


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else str(key)


def problem(value: Any, spec: Any, where: str = "") -> str | None:
    """What is wrong with `value` under `spec`, naming the field as `where` (a dotted path; "" for the whole
    value); None when it fits."""
    if not where:
        found = problem(value, spec, "\0")
        return None if found is None else found.replace("\0.", "").replace("\0", "the whole file")
    if isinstance(spec, list):  # a list of items of the one spec it holds
        if not isinstance(value, list):
            return f"{where} is {_kind(value)}; expected a list"
        return next((p for i, item in enumerate(value) if (p := problem(item, spec[0], f"{where}[{i}]"))), None)
    if isinstance(spec, Optional):
        return None if value is None else problem(value, spec.spec, where)
    if isinstance(spec, Missing):
        return problem(value, spec.spec, where)
    if isinstance(spec, Either):
        found = [problem(value, s, where) for s in spec.specs]
        return None if any(p is None for p in found) else found[-1]
    if isinstance(spec, OneOf):
        return None if value in spec.values else \
            f"{where} is {value!r}; expected one of {', '.join(map(repr, spec.values))}"
    if isinstance(spec, dict):
        if not isinstance(value, Mapping):
            return f"{where} is {_kind(value)}; expected an object with {', '.join(spec)}"
        for key, sub in spec.items():
            if key not in value:
                if isinstance(sub, Missing):
                    continue
                return f"{where} has no {key!r}"
            found = problem(value[key], sub, _join(where, key))
            if found:
                return found
        return None
    if isinstance(spec, MapOf):
        if not isinstance(value, Mapping):
            return f"{where} is {_kind(value)}; expected an object"
        for key, item in value.items():
            found = problem(item, spec.spec, _join(where, key))
            if found:
                return found
        return None
    if spec == NUMBER:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        return None if ok else f"{where} is {_kind(value)}; expected a finite number"
    if spec == SHA256:
        return None if isinstance(value, str) and _HEX.fullmatch(value) else \
            f"{where} is {_kind(value)}; expected a sha256 (64 lowercase hex digits)"
    if spec == RELATIVE:
        if not isinstance(value, str) or not value:
            return f"{where} is {_kind(value)}; expected a relative path"
        path = PurePosixPath(value)
        if path.is_absolute() or "\\" in value or ".." in path.parts or ":" in value:
            return f"{where} is {value!r}; expected a relative path inside the zoo (no '..', not absolute)"
        return None
    if spec is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return None if ok else f"{where} is {_kind(value)}; expected an integer"
    if isinstance(spec, type):
        return None if isinstance(value, spec) and not (spec is not bool and isinstance(value, bool)) else \
            f"{where} is {_kind(value)}; expected {_KINDS.get(spec, spec.__name__)}"
    raise TypeError(f"unknown spec {spec!r}")


_KINDS = {str: "a string", dict: "an object", list: "a list", bool: "true or false"}


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    text = json.dumps(value, default=str)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


class _Twice(dict):
    """A JSON object that writes a key twice (`twice`), kept until `written_twice` says where it is."""

    twice: str = ""


def duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`json.loads(object_pairs_hook=...)`: an object that writes a key twice is marked for `written_twice`."""
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen and not isinstance(seen, _Twice):
            seen = _Twice(seen)
            seen.twice = key
        seen[key] = value
    return seen


def written_twice(value: Any, where: str = "") -> str | None:
    """Where a JSON value parsed with `duplicate_keys` writes a key twice ("FIELD: the key K is written twice"), or
    None."""
    if isinstance(value, _Twice):
        return f"{where + ': ' if where else ''}the key {value.twice!r} is written twice"
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = written_twice(item, f"{where}[{key}]" if isinstance(value, list) else _join(where, key))
        if found:
            return found
    return None


BUDGET = {"iterations": Missing(Optional(NUMBER)), "env_steps": Missing(Optional(NUMBER)),
          "seconds": Optional(NUMBER)}
SCENARIO = Either((OneOf(("none",)), {"name": str, "sha256": Optional(str)}))
WEIGHT_FILES = ("weights.safetensors", "weights.pt")
WEIGHTS = {"file": OneOf(WEIGHT_FILES), "bytes": int, "sha256": SHA256, "precision": OneOf(("fp32", "fp16")),
           "parameters": int}
SEEDS = {"command": str, "source": str, "metric": str, "note": Missing(Optional(str)),
         "rows": [{"set": str, "reference": str, "reference_value": NUMBER, "values": MapOf(NUMBER)}]}

POLICY_ENTRY = {"directory": RELATIVE, "agent": str, "model": Optional(str), "scenario": SCENARIO,
                "seed": Optional(int), "command": str, "budget": BUDGET, "trace": {"name": str, "sha256": str},
                "machine": MapOf(NUMBER), "metric": str, "validation_score": Optional(NUMBER),
                "schedrl_version": str, "git_commit": str, "weights": WEIGHTS, "policy_sha256": Missing(SHA256),
                "seeds": Missing(dict)}
"""A manifest's `policies.NAME` (`policy_sha256`: the checksum of its policy.json, required from format 2 on)."""
RULE_ENTRY = {"file": RELATIVE, "agent": OneOf(("tuned",)), "scenario": {"name": str, "sha256": Optional(str)},
              "seed": Optional(int), "command": str, "budget": {"seconds": Optional(NUMBER)},
              "trace": {"name": str, "sha256": Missing(Optional(str))}, "metric": Optional(str),
              "validation_score": Optional(NUMBER), "schedrl_version": str, "bytes": int, "sha256": SHA256}
"""A manifest's `rules.NAME`."""
CARD = {"agent": str, "model": Optional(str), "scenario": SCENARIO, "seed": Optional(int), "command": str,
        "budget": BUDGET, "trace": {"name": Either((str, list)), "sha256": str}, "machine": MapOf(NUMBER),
        "normalisation": Either((OneOf(("none",)), dict)),
        "validation": {"metric": str, "score": Optional(NUMBER), "sequences": int, "length": Optional(int),
                       "lower_is_better": Missing(bool), "heuristics": Missing(MapOf(NUMBER))},
        "precision": {"stored": OneOf(("fp32", "fp16")), "why": str}, "schedrl_version": str,
        "exported_with": str, "git_commit": str}
"""A policy.json's `card` (`schedrl.zoo.card.make`)."""
POLICY_FILE = {"format": int, "name": str, "record": dict, "architecture": dict, "weights": WEIGHTS, "card": CARD}
"""A policy.json (`schedrl.zoo.store.write`)."""

