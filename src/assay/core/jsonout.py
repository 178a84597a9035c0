"""JSON as every ``--format json`` output writes it: strict, with no NaN or Infinity.

Python's json writes a float NaN as the bare word ``NaN`` (and infinities as ``Infinity``), which is not JSON: jq,
JavaScript's JSON.parse, Go and most other readers refuse the whole document. A figure that is not a finite
number was not computed (a mean over no questions, a measure a run lacks), so it is written ``null``: missing,
never zero.
"""

from __future__ import annotations

import json
import math


def finite(value):
    """``value`` with every float that is NaN or infinite (at any depth of dicts, lists and tuples) made None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps(value, **kwargs) -> str:
    """``json.dumps(value, **kwargs)`` with non-finite floats written as null; refuses (ValueError) to write one
    anywhere else, e.g. returned by a ``default`` hook, rather than write invalid JSON."""
    return json.dumps(finite(value), allow_nan=False, **kwargs)
