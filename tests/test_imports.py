"""Importing schedrl (and running `schedrl traces`) must not pull in the heavy RL stack."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("torch", "ray", "gymnasium")

PROBE = """
import json, sys
import schedrl, schedrl.workload, schedrl.cli.main
import schedrl.workload.catalog, schedrl.cli.traces
from schedrl.cli.main import main
main(["traces", "list", "--json"])
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r})))
"""


def test_import_schedrl_does_not_load_torch_ray_or_gymnasium():
    result = subprocess.run([sys.executable, "-c", PROBE.format(heavy=set(HEAVY))],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
