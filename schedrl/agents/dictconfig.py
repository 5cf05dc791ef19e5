"""`from_dict` / `to_dict` of the agents' frozen dataclass env configs, written once.

An env config travels as a plain dict: in RLlib's `env_config`, in run records (JSON) and in sweep files. A config
class mixes `DictConfig` in and says which fields are tuples (`tuple_fields`: field -> element type, stored as a
tuple, written as a list) and which are mappings (`dict_fields`: field -> value type, or None to keep the values).
No ray or torch: the CLI and the sweep reader import the configs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, fields
from typing import Any


class DictConfig:
    """The dict form of a frozen dataclass: unknown keys are one error naming them and the valid ones."""

    dict_label = "env"
    """How errors name the config: `unknown <dict_label> option(s): ...`."""
    tuple_fields: Mapping[str, Callable[[Any], Any]] = {}
    dict_fields: Mapping[str, Callable[[Any], Any] | None] = {}

    @classmethod
    def from_dict(cls, config: Mapping[str, Any] | None):
        """The config from its dict form (None: the defaults). RLlib's vector entry point adds `num_envs`, which
        the vector env handles: it is dropped here."""
        config = dict(config or {})
        config.pop("num_envs", None)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(config) - known)
        if unknown:
            raise ValueError(f"unknown {cls.dict_label} option(s): {', '.join(unknown)}; valid: {', '.join(sorted(known))}")
        for key, cast in cls.tuple_fields.items():
            if key in config:
                config[key] = tuple(cast(v) for v in config[key])
        for key, cast in cls.dict_fields.items():
            if key in config:
                config[key] = {k: v if cast is None else cast(v) for k, v in dict(config[key]).items()}
        return cls(**config)

    def to_dict(self) -> dict:
        """JSON-ready: tuples as lists, mappings as dicts, in field order."""
        out = asdict(self)
        for key in self.tuple_fields:
            out[key] = list(getattr(self, key))
        for key in self.dict_fields:
            out[key] = dict(getattr(self, key))
        return out


def check_choices(config: object, **choices: Iterable[str]) -> None:
    """ValueError ("NAME must be one of A, B; got 'x'") for the first field of `config` named in `choices` whose value
    is not one of its choices, checked in the order given."""
    for name, allowed in choices.items():
        value = getattr(config, name)
        if value not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
