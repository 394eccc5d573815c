"""``python -m rc_sim_engine`` is ``rcsim``."""

import sys

from rc_sim_engine.cli import main

sys.exit(main())
