"""Moved to cutelite.teach.widgets (the teaching layer); this name stays so that older notebooks still import."""

from .teach.widgets import *  # noqa: F401,F403
from .teach.widgets import __all__  # noqa: F401
