from pathlib import Path

import pytest

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
