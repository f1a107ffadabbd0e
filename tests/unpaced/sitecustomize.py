"""Run at the start of a doiget process whose PYTHONPATH has this folder first
(pacing.unpaced_env): its requests are spaced by no gap."""

import sys
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parent.parent)
sys.path.append(_TESTS)
try:
    from pacing import unpace
finally:
    sys.path.remove(_TESTS)
unpace()
