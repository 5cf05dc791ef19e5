"""A typed YAML reader: values checked against dataclass field types, Tune search spaces, helpful errors.

The sweep semantics (which sections exist, what may be searched) live in `sweep_file.py`; this module only
knows how to read a mapping into a dataclass's fields: type coercion (`3e-4` read as a float), search
spaces in Tune's vocabulary (`{grid: [...]}`, `{choice: [...]}`, `{uniform: [lo, hi]}`,
`{loguniform: [lo, hi]}`, `{randint: [lo, hi]}`, hi excluded), and errors naming the file and the key
path, with "did you mean" hints for near misses, common aliases and keys of another section.
"""

from __future__ import annotations

import difflib
import math
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

SEARCH_KINDS = ("grid", "choice", "uniform", "loguniform", "randint")
INT64 = (-2**63, 2**63 - 1)
"""Bounds of a randint range: numpy draws Tune's integers as int64."""
# names people reach for, mapped to ours (for "did you mean" hints)
ALIASES = {
    "learning_rate": "lr", "pi_lr": "lr", "lambda": "lambda_", "gae_lambda": "lambda_", "lam": "lambda_",
    "epochs": "num_epochs", "train_batch_size": "train_batch_size_per_learner",
    "batch_size": "train_batch_size_per_learner", "entropy_coef": "entropy_coeff", "entropy": "entropy_coeff",
    "clip_ratio": "clip_param", "num_workers": "num_env_runners", "seq_len": "sequence_length",
    "samples": "num_samples", "max_iterations": "iterations", "time_limit": "time_budget",
}


class SweepError(ValueError):
    """A sweep file that does not validate; the message names the file and the key path."""


@dataclass(frozen=True)
class SearchSpace:
    """One searched value, in Tune's vocabulary."""

    kind: str
    """grid (every value, crossed with the other grids), choice, uniform, loguniform or randint."""
    values: tuple
    """The candidates (grid, choice) or the bounds `(lo, hi)` (randint excludes hi)."""

    @property
    def discrete(self) -> bool:
        return self.kind in ("grid", "choice")

    def probes(self) -> tuple:
        """Values that must all be valid: every candidate, or both ends of the range."""
        return (self.values[0], self.values[1] - 1) if self.kind == "randint" else self.values

    def to_tune(self, convert=lambda value: value):
        """The Tune search-space object; `convert` maps candidates (a model name to its module spec)."""
        from ray import tune

        if self.kind == "grid":
            return tune.grid_search([convert(v) for v in self.values])
        if self.kind == "choice":
            return tune.choice([convert(v) for v in self.values])
        return {"uniform": tune.uniform, "loguniform": tune.loguniform, "randint": tune.randint}[self.kind](*self.values)

    def to_data(self) -> dict:
        return {self.kind: list(self.values)}

    def __str__(self) -> str:
        return f"{self.kind}({', '.join(str(v) for v in self.values)})"


class _TypeMismatch(Exception):
    pass


def _type_name(hint) -> str:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return " or ".join(_type_name(a) for a in typing.get_args(hint))
    if hint is type(None):
        return "null"
    if typing.get_origin(hint) is tuple:
        args = typing.get_args(hint)
        if args and args[-1] is not Ellipsis:  # a fixed-length tuple: (timestep, weight)
            return f"a list [{', '.join(_type_name(a) for a in args)}]"
        return f"a list of {_type_name(args[0])}"
    if typing.get_origin(hint) in (Mapping, dict):
        return "a mapping"
    return getattr(hint, "__name__", str(hint))


def _coerce(value, hint):
    """`value` as the dataclass field type `hint`, or `_TypeMismatch`."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        arms = typing.get_args(hint)
        if value is None and type(None) in arms:
            return None
        for arm in arms:
            if arm is not type(None):
                try:
                    return _coerce(value, arm)
                except _TypeMismatch:
                    pass
        raise _TypeMismatch
    if hint is Any:
        return value
    if hint is float:
        if isinstance(value, str):
            try:  # YAML 1.1 reads `3e-4` (no dot) as a string
                value = float(value)
            except ValueError:
                raise _TypeMismatch from None
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise _TypeMismatch
        try:
            number = float(value)
        except OverflowError:  # an integer past the float range
            raise _TypeMismatch from None
        if not math.isfinite(number):  # YAML's `.nan` and `.inf` are no setting's value
            raise _TypeMismatch
        return number
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise _TypeMismatch
    if hint in (str, bool):
        if type(value) is hint:
            return value
        raise _TypeMismatch
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise _TypeMismatch
        args = typing.get_args(hint)
        if args and args[-1] is not Ellipsis:  # fixed length, one type per place
            if len(value) != len(args):
                raise _TypeMismatch
            return tuple(_coerce(v, a) for v, a in zip(value, args))
        return tuple(_coerce(v, args[0]) for v in value)
    if origin in (Mapping, dict):
        if not isinstance(value, Mapping):
            raise _TypeMismatch
        key_type, value_type = typing.get_args(hint)
        return {_coerce(k, key_type): _coerce(v, value_type) for k, v in value.items()}
    return value


def _numeric_base(hint):
    """int or float when the field holds a number (possibly optional), else None."""
    arms = [a for a in typing.get_args(hint) if a is not type(None)] if typing.get_args(hint) else [hint]
    return arms[0] if len(arms) == 1 and arms[0] in (int, float) else None


def is_search(value) -> bool:
    return isinstance(value, Mapping) and len(value) == 1 and next(iter(value)) in SEARCH_KINDS


class Reader:
    """Validation state of one file: every error names the file and the key path."""

    def __init__(self, source: str, sections: Mapping[str, type] | None = None):
        self.source = source
        self.sections = dict(sections or {})
        """Section name -> dataclass, for "did you mean <section>.<key>?" hints across sections."""

    def fail(self, message: str):
        raise SweepError(f"{self.source}: {message}")

    def unknown(self, path: str, key: str, valid) -> None:
        valid = list(valid)
        wanted = ALIASES.get(key, key)
        elsewhere = [f"{name}.{wanted}" for name, cls in self.sections.items()
                     if wanted in {f.name for f in fields(cls)} and not path.startswith(name + ".")]
        # a known alias, a near miss here, the same key in another section, a looser near miss
        candidates = ([wanted] if wanted in valid else difflib.get_close_matches(key, valid, n=1, cutoff=0.8)
                      or elsewhere or difflib.get_close_matches(key, valid, n=1))
        hint = f"did you mean {candidates[0]}?" if candidates else "valid: " + ", ".join(valid)
        self.fail(f"unknown key '{path}' ({hint})")

    def value(self, raw, hint, path: str):
        try:
            return _coerce(raw, hint)
        except _TypeMismatch:
            spaces = " (search spaces: grid, choice, uniform, loguniform, randint)" if isinstance(raw, Mapping) else ""
            shown = repr(raw) if len(repr(raw)) <= 100 else repr(raw)[:100] + "..."  # a huge number or grid
            self.fail(f"'{path}' must be {_type_name(hint)}; got {shown}{spaces}")

    def search_space(self, raw: Mapping, hint, path: str) -> SearchSpace:
        kind, args = next(iter(raw.items()))
        if not isinstance(args, list) or not args:
            self.fail(f"'{path}': {{{kind}: ...}} takes a non-empty list; got {args!r}")
        if kind in ("grid", "choice"):
            return SearchSpace(kind, tuple(self.value(v, hint, f"{path}.{kind}") for v in args))
        number = _numeric_base(hint)
        if len(args) != 2:
            self.fail(f"'{path}': {{{kind}: [lo, hi]}} takes two bounds; got {args!r}")
        if number is None or (number is int and kind != "randint"):
            use = "randint or grid" if number is int else "grid or choice"
            self.fail(f"'{path}' holds {_type_name(hint)}: {kind} cannot sample it (use {use})")
        lo, hi = (self.value(v, int if kind == "randint" else float, f"{path}.{kind}") for v in args)
        if not lo < hi or (kind == "loguniform" and lo <= 0):
            self.fail(f"'{path}': {kind} needs lo < hi" + (" and lo > 0" if kind == "loguniform" else "") + f"; got {args!r}")
        # Tune draws with numpy: a float range must be finite and so must its width, integers must fit int64
        if kind == "randint" and not INT64[0] <= lo < hi <= INT64[1]:
            self.fail(f"'{path}': randint bounds must lie in [-2**63, 2**63 - 1] (64-bit integers); got {args!r}")
        if kind != "randint" and not math.isfinite(hi - lo):
            self.fail(f"'{path}': {kind} needs finite bounds less than 1.8e308 apart; got {args!r}")
        return SearchSpace(kind, (lo, hi))

    def section(self, cls, raw, path: str, searchable: bool = False) -> tuple[dict, dict]:
        """Fixed values and search spaces of one section, every key checked against `cls`."""
        if raw is None:
            return {}, {}
        if not isinstance(raw, Mapping):
            self.fail(f"'{path}' must be a mapping of keys to values; got {raw!r}")
        hints = typing.get_type_hints(cls)
        valid = [f.name for f in fields(cls) if f.init]
        fixed, searched = {}, {}
        for key, value in raw.items():
            if key not in valid:
                self.unknown(f"{path}.{key}", str(key), valid)
            if is_search(value):
                if not searchable:
                    fixed = ('env', 'stop', 'resources', 'training', 'evaluate')
                    sections = ', '.join(s for s in self.sections if s not in fixed)
                    self.fail(f"'{path}.{key}': search spaces belong under env, {sections}, model or param_space")
                searched[key] = self.search_space(value, hints[key], f"{path}.{key}")
            else:
                fixed[key] = self.value(value, hints[key], f"{path}.{key}")
        return fixed, searched

    def build(self, cls, values: dict, path: str):
        try:
            return cls(**values)
        except ValueError as e:
            self.fail(f"{path}: {e}")


