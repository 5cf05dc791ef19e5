"""schedrl.dtsim stands alone: importing and running it pulls in neither ray nor torch (gymnasium comes with
`import schedrl`, which registers every agent's env)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROBE = """
import json, sys
import schedrl.dtsim, schedrl.dtsim.heuristics, schedrl.dtsim.fidelity, schedrl.dtsim.sweep, schedrl.dtsim.__main__
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {"torch", "ray"})))
"""


@pytest.mark.integration  # a fresh interpreter checks the imports
def test_dtsim_imports_no_torch_or_ray():
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
