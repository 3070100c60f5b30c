"""``python -m sblr``: see :mod:`sblr.cli`."""

import sys

from sblr.cli import main

if __name__ == "__main__":
    sys.exit(main())
