"""Shared fixtures."""

from __future__ import annotations

import pytest

from mctsviz import games
from mctsviz.testing import toy_path


@pytest.fixture
def toy_game():
    return games.load(toy_path())
