"""``python -m rocescope ARGS…`` and the ``rocescope`` command pip installs: the command line,
run in this process by the module's own build of rocescope."""

import sys

from . import _rocescope


def main() -> None:
    """Runs ``rocescope`` with this process's arguments and exits with its status."""
    sys.exit(_rocescope.main(["rocescope", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
