"""YAML as schedrl reads it (sweep files, scenario files, `--set` values): safe types only, and a mapping that
writes a key twice is an error naming the key and its line, where PyYAML would keep the last value in silence."""

from __future__ import annotations

from typing import Any

import yaml


class DuplicateKeyError(yaml.constructor.ConstructorError):
    """A mapping writes the same key twice."""


class _Loader(yaml.SafeLoader):
    pass


def _mapping(loader: _Loader, node: yaml.MappingNode):
    """PyYAML's own two-step mapping construction (so anchors that refer to themselves behave as before), after the
    keys are checked."""
    loader.flatten_mapping(node)
    seen: dict[Any, yaml.Node] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            twice = key in seen
        except TypeError:  # an unhashable key: PyYAML's own error follows
            twice = False
        if twice:
            raise DuplicateKeyError(None, None, f"the key {key!r} is written twice (first on line "
                                    f"{seen[key].start_mark.line + 1})", key_node.start_mark)
        seen[key] = key_node
    data: dict = {}
    yield data
    data.update(loader.construct_mapping(node))


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def load(text: str) -> Any:
    """`yaml.safe_load(text)`, refusing a key written twice in one mapping (DuplicateKeyError, a YAMLError whose
    `problem_mark` is the second key's line)."""
    return yaml.load(text, Loader=_Loader)  # noqa: S506  (a SafeLoader subclass)
