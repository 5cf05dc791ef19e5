"""Shared by the tests of `examples/`: each script loaded as a module (they are not a package)."""

from __future__ import annotations

import importlib.util

from shared_traces import REPO


def load_example(name: str):
    """`examples/<name>.py` (`name` may hold a folder: `research/f1_neighbourhood`) as a module, its
    `if __name__ == "__main__"` block not run."""
    path = REPO / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
