"""Moved to cutelite.teach.exercises (the teaching layer); this name stays so that older notebooks still import."""

from .teach.exercises import *  # noqa: F401,F403
from .teach.exercises import __all__  # noqa: F401
