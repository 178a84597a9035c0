import os
import tempfile
from pathlib import Path

import pytest

# Hermetic models: no test sees a developer's fastembed cache (bge-small, cross-encoders), so
# `--embedder auto` means the offline model and a named cross-encoder is missing, everywhere.
os.environ["FASTEMBED_CACHE_PATH"] = tempfile.mkdtemp(prefix="assay-empty-fastembed-cache-")

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
