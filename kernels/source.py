"""Python source that the book's code generators write (a layout's function, a traced kernel, an unrolled
k-tile, a self-test's kernel), turned into the function it defines. No numba here.
"""

import itertools
import linecache

__all__ = ["compile_function"]

_count = itertools.count()


def compile_function(src, name, env=None, kind="generated"):
    """The function `name` that `src` defines, exec'd with `env` as its globals. Its text is kept where
    tracebacks and inspect find it (linecache, under the filename "<kind name #n>") and in `.source`."""
    filename = "<%s %s #%d>" % (kind, name, next(_count))
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = dict(env or {})
    exec(compile(src, filename, "exec"), namespace)
    fn = namespace[name]
    fn.source = src
    return fn
