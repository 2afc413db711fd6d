"""A cheater's build step: copy the shared modules named on the command line into this folder.

Run by ``nap tournament run --bot FOLDER`` (and ``nap bot check``/``submit``) in the bot's
folder, before the bot starts: ``build = ["{python}", "../build.py", "_perfect.py"]``. So
the folder is self-contained at run time, when it may be read-only and see nothing beside
it. A file already up to date is left alone (its bytes, so the content hash, unchanged).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    """Copy each named module of ``bench/cheaters/`` into the working folder."""
    for name in sys.argv[1:]:
        source = HERE / name
        if source.parent != HERE or not source.is_file():
            sys.exit(f"build: no shared module {name} in {HERE}")
        text = source.read_bytes()
        target = Path.cwd() / name
        if not target.is_file() or target.read_bytes() != text:
            target.write_bytes(text)


if __name__ == "__main__":
    main()
