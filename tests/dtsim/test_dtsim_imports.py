"""schedrl.dtsim stands alone: importing and running it pulls in no RL stack."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
import schedrl.dtsim, schedrl.dtsim.heuristics, schedrl.dtsim.fidelity, schedrl.dtsim.__main__
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {"torch", "ray", "gymnasium"})))
"""


def test_dtsim_imports_no_torch_ray_or_gymnasium():
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
