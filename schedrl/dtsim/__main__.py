"""`python -m schedrl.dtsim fidelity|sweep`: the same command as `schedrl dtsim` (`schedrl.cli.dtsim`).

The command lives with the command line because `sweep --checkpoint` loads trained agents, which build on this
package; the simulator's own modules import no agent.
"""

from __future__ import annotations

import sys

from schedrl.cli.dtsim import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
