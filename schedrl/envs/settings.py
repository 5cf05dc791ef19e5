"""Env settings from a `config=` mapping and/or keyword arguments (`gym.make(id, trace=..., backfill=...)`)."""

from __future__ import annotations

from typing import Any, Mapping, TypeVar

C = TypeVar("C")


def env_config(config_class: type[C], config: Mapping[str, Any] | C | None, settings: Mapping[str, Any]) -> C:
    """`config_class` from `config` (a dict, an instance or None) with keyword `settings` over it.

    The same setting given both ways is refused rather than one silently winning.
    """
    if isinstance(config, config_class):
        if not settings:
            return config
        base = config.to_dict()
    else:
        base = dict(config or {})
        both = sorted(set(base) & set(settings))
        if both:
            raise ValueError(f"env setting(s) {', '.join(both)} given both in config= and as keyword arguments")
    return config_class.from_dict({**base, **settings})
