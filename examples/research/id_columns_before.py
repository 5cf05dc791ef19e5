"""`schedrl ...` with the id columns as they were read before 2026-11-26, for comparison.

Until then an RLScheduler checkpoint trained on a trace without user, group or executable ids (a
Lublin-model trace: SWF -1) saw those columns clipped to 1 on a trace that has them (a PWA log): an input it
never trained on, read by first-layer weights still at their random start. Now a column the training trace
lacks stays 0 on every trace (`JobFeatures.id_fields`). This runs any `schedrl` command with every id column
read as before, so the two can be compared on the same checkpoint (docs/experiments/rlscheduler.md, "The id columns"):

    python examples/research/id_columns_before.py evaluate CHECKPOINT \
        --traces SDSC-SP2,HPC2N,CTC-SP2,SDSC-BLUE --markdown
"""

from __future__ import annotations

import sys
from dataclasses import replace

from schedrl.agents.rlscheduler import observation

_from_dict = observation.JobFeatures.from_dict.__func__


def _every_id_column(cls, d):
    return replace(_from_dict(cls, d), id_fields=observation.ID_FIELDS)


observation.JobFeatures.from_dict = classmethod(_every_id_column)

if __name__ == "__main__":
    from schedrl.cli.main import main

    sys.exit(main(sys.argv[1:]))
