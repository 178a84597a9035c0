"""JSON as assay reads it from another party (a model endpoint, a judge, an ``http`` or ``command`` retriever):
nested at most ``limits.JSON_DEPTH`` levels.

Python's json parses a document nested a few hundred levels deep, and then every recursive step after it
(redacting each string, repr in an error message, writing it back out) can exceed the interpreter's recursion
limit and raise ``RecursionError`` far from the parse. No reply assay understands is more than a handful of levels
deep, so depth is checked once, right after parsing, without recursion, and a deeper document is refused there
like any other text that is not the expected JSON: ``TooDeep``, a ``ValueError``.
"""

from __future__ import annotations

import json

from assay.core.limits import JSON_DEPTH


class TooDeep(ValueError):
    """A JSON document nested deeper than the limit (or so deep that the parser itself gave up)."""

    def __init__(self, limit: int):
        self.limit = limit
        super().__init__(f"JSON nested deeper than {limit} levels")


def loads(text, max_depth: int = JSON_DEPTH):
    """``json.loads(text)``, refusing (``TooDeep``) a document whose arrays and objects nest deeper than
    ``max_depth`` levels (``[]`` is one level, ``[[]]`` two). Raises ``ValueError`` (``json.JSONDecodeError``, or
    an integer with too many digits) for text that is not JSON, as ``json.loads`` does."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeep(max_depth) from None
    if _deeper_than(value, max_depth):
        raise TooDeep(max_depth)
    return value


def _deeper_than(value, limit: int) -> bool:
    stack = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False
