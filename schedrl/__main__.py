"""`python -m schedrl` runs the command line."""

import sys

from schedrl.cli.main import main

sys.exit(main())
