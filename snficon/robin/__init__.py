"""Robin (batexpe 1.2) experiment files: write them for a campaign's runs, and run them.

A robin file is a flat YAML mapping of seven required keys: ``batcmd``,
``schedcmd``, ``output-dir`` and the ``simulation-timeout``,
``ready-timeout``, ``success-timeout`` and ``failure-timeout`` in seconds.
:mod:`snficon.robin.files` reads and writes them; :mod:`snficon.robin.runner`
runs one the way ``robin FILE.yaml`` does.
"""

from snficon.robin.files import KEYS, RobinFile, read_robin, write_robin
from snficon.robin.runner import RobinOutcome, run_robin

__all__ = ["KEYS", "RobinFile", "RobinOutcome", "read_robin", "run_robin", "write_robin"]
