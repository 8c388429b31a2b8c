"""Bad input to an experiments tool: one line on stderr that names the tool, and exit code 2, as every
FlashLab tool answers it. The tools put experiments/ on sys.path and call fail(message)."""
import os
import sys


def fail(message):
    sys.stderr.write(f"{os.path.basename(sys.argv[0])}: {message}\n")
    sys.exit(2)
