import os
import tempfile
from pathlib import Path

import pytest

# Hermetic models: no test sees a developer's fastembed cache (bge-small, cross-encoders), so
# `--embedder auto` means the offline model and a named cross-encoder is missing, everywhere.
os.environ["FASTEMBED_CACHE_PATH"] = tempfile.mkdtemp(prefix="assay-empty-fastembed-cache-")

# Property tests draw the same examples on every run (CI included): a failure reproduces, and `make test` cannot
# pass on one run and fail on the next. Set ASSAY_HYPOTHESIS_RANDOM=1 to explore new examples locally.
if not os.environ.get("ASSAY_HYPOTHESIS_RANDOM"):
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("assay", derandomize=True)
    _hypothesis_settings.load_profile("assay")

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"
MINI = FIXTURES / "mini"
DEMO = ROOT / "judgments" / "demo"


@pytest.fixture
def warehouse(tmp_path):
    from assay.warehouse import Warehouse

    wh = Warehouse.open(tmp_path / "wh.duckdb")
    yield wh
    wh.close()


@pytest.fixture
def mini_corpus():
    return MINI / "corpus"


@pytest.fixture
def mini_judgments():
    return MINI / "judgments.jsonl"
