"""What every test runs with.

Without ``--seed`` a tournament draws a secret random seed (docs/security.md); the tests
that check outcomes want the same deals every run, so the suite gives the command line a
seed through ``$NAP_SEED``. The tests of the secret default seed take it away again
(``monkeypatch.delenv``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture(autouse=True, scope="session")
def _seeded() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NAP_SEED", os.environ.get("NAP_TEST_SEED", "1"))
        yield
