"""``python -m hanna_stats``: the command line (:mod:`hanna_stats.cli`).

The process ends with :func:`os._exit` once the command has returned and its output is flushed:
every store it opened is closed by then, and the interpreter's teardown (freeing the compiled
kernels, DuckDB and polars, about 0.3 s on 2 cores) would do nothing a finished command needs.
"""

import os
import sys

from hanna_stats.cli import main, quiet_stdout

code = main()
try:
    sys.stdout.flush()
    sys.stderr.flush()
except BrokenPipeError:  # the reader went away after the command's last write: stop quietly
    quiet_stdout()
os._exit(code)
