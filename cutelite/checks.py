"""Moved to cutelite.teach.checks (the teaching layer); this name stays so that older notebooks still import."""

from .teach.checks import *  # noqa: F401,F403
from .teach.checks import __all__  # noqa: F401
