"""`examples/research/id_columns_before.py` (docs/experiments/rlscheduler.md, "The id columns"): it reads every id
column as before 2026-11-26, in its own process, and leaves the library's reading alone elsewhere."""

from __future__ import annotations

import subprocess
import sys

import pytest

from shared_traces import REPO

NORM = {"time_scale": 5e4, "user_scale": 1.0, "group_scale": 1.0, "app_scale": 1.0, "log_times": True,
        "id_fields": []}  # a Lublin-model training trace: no ids


@pytest.mark.integration  # runs the example script
def test_the_example_reads_every_id_column_and_the_library_none():
    from schedrl.agents.rlscheduler.observation import JobFeatures

    assert JobFeatures.from_dict(NORM).id_fields == ()
    code = ("import runpy, sys; sys.argv = ['x']; "
            f"runpy.run_path({str(REPO / 'examples' / 'research' / 'id_columns_before.py')!r}); "
            "from schedrl.agents.rlscheduler.observation import JobFeatures; "
            f"print(','.join(JobFeatures.from_dict({NORM!r}).id_fields))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "user,group,app"
