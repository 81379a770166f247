"""Moved to cutelite.teach.viz (the teaching layer); this name stays so that older notebooks still import."""

from .teach.viz import *  # noqa: F401,F403
from .teach.viz import __all__  # noqa: F401
