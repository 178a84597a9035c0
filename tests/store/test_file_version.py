"""A warehouse written by a newer DuckDB than assay's is refused in one line that names the DuckDB that wrote it and
says how to convert it.

No DuckDB newer than the one installed is at hand in a test, so the file is a real warehouse written by this
DuckDB whose header is then stamped as a newer DuckDB's: a storage version no DuckDB reads yet (200), the writer
"v9.9.9", the header's checksum recomputed as DuckDB computes it. DuckDB then refuses it exactly as DuckDB 1.5
refuses a DuckDB 2 file ("created with a newer version of DuckDB")."""

import struct

import duckdb
import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.core.errors import WarehouseError
from assay.runs.runner import RunOptions, run
from assay.store.file_version import writer_version
from assay.store.warehouse import Warehouse
from conftest import MINI

HEADER = 4096  # DuckDB's file header block: checksum (8 bytes), then what it covers


def _checksum(block: bytes) -> int:
    """DuckDB's checksum of a block (storage/checksum.cpp): 5381 xor every 8-byte word times 0xbf58476d1ce4e5b9."""
    total = 5381
    for (word,) in struct.iter_unpack("<Q", block):
        total ^= (word * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    return total


def stamp(path, storage: int, writer: bytes) -> None:
    """Make ``path``'s header say it was written with storage version ``storage`` by DuckDB ``writer``."""
    with open(path, "r+b") as f:
        head = bytearray(f.read(HEADER))
        assert head[8:12] == b"DUCK" and _checksum(head[8:]) == struct.unpack("<Q", head[:8])[0]
        head[12:20] = struct.pack("<Q", storage)
        head[52:84] = writer.ljust(32, b"\0")
        head[:8] = struct.pack("<Q", _checksum(head[8:]))
        f.seek(0)
        f.write(head)


@pytest.fixture
def newer(tmp_path):
    path = tmp_path / "w" / "assay.duckdb"
    path.parent.mkdir()
    Warehouse.open(path).close()
    stamp(path, 200, b"v9.9.9")
    return path


def test_the_writer_is_read_from_the_header(tmp_path, newer):
    path = tmp_path / "mine.duckdb"
    duckdb.connect(str(path)).close()
    assert writer_version(path) == duckdb.__version__
    assert writer_version(newer) == "9.9.9"
    (tmp_path / "text.duckdb").write_text("not a database")
    assert writer_version(tmp_path / "text.duckdb") is None
    assert writer_version(tmp_path / "absent.duckdb") is None


@pytest.mark.parametrize("args", [["report"], ["runs"], ["sql", "SELECT 1"], ["upgrade"],
                                  ["run", "--corpus", "{mini}/corpus", "--judgments", "{mini}/judgments.jsonl"]],
                         ids=lambda a: a[0])
def test_a_warehouse_of_a_newer_duckdb_is_one_line_naming_it_and_the_conversion(newer, args):
    result = CliRunner().invoke(cli, [a.format(mini=MINI) for a in args] + ["--warehouse", str(newer)],
                                catch_exceptions=False)
    assert result.exit_code == 1 and result.stdout == ""
    major, minor = duckdb.__version__.split(".")[:2]
    copy = newer.with_name(f"assay-duckdb{major}.{minor}.duckdb")
    assert result.stderr.splitlines() == [
        f"error: warehouse {newer} was written by DuckDB 9.9.9, which this assay's DuckDB {duckdb.__version__} "
        f"cannot read; convert it once with DuckDB 9.9.9 (in another Python environment, see docs/install.md): "
        f"ATTACH '{newer}' AS old (READ_ONLY); ATTACH '{copy}' AS new (STORAGE_VERSION 'v{major}.{minor}.0'); "
        f"COPY FROM DATABASE old TO new; then use --warehouse {copy}"]
    assert not copy.exists()


def test_without_a_writer_in_the_header_it_says_a_newer_duckdb_and_quotes_the_path(tmp_path):
    path = tmp_path / "it's.duckdb"
    Warehouse.open(path).close()
    stamp(path, 200, b"")
    with pytest.raises(WarehouseError) as caught:
        Warehouse.open(path, read_only=True)
    message = str(caught.value)
    assert message.startswith(f"warehouse {path} was written by a newer DuckDB, which this assay's DuckDB ")
    assert "convert it once with that newer DuckDB" in message
    assert f"ATTACH '{str(path).replace(chr(39), chr(39) * 2)}' AS old (READ_ONLY)" in message


def test_the_conversion_it_names_makes_a_file_this_duckdb_opens(tmp_path):
    """The SQL of the message, run by the DuckDB installed (standing in for the newer one), writes a copy in the
    named storage version that Warehouse.open reads with its runs."""
    source = tmp_path / "assay.duckdb"
    with Warehouse.open(source) as wh:
        record = run(wh, MINI / "corpus", MINI / "judgments.jsonl", RunOptions())
    stamped = tmp_path / "stamped.duckdb"
    stamped.write_bytes(source.read_bytes())
    stamp(stamped, 200, b"v9.9.9")
    with pytest.raises(WarehouseError) as caught:
        Warehouse.open(stamped, read_only=True)
    sql = str(caught.value).split("docs/install.md): ")[1].split("; then use")[0]
    con = duckdb.connect()
    con.execute(sql.replace(str(stamped), str(source)))  # the unstamped original: this DuckDB can read it
    con.close()
    copy = tmp_path / f"stamped-duckdb{'.'.join(duckdb.__version__.split('.')[:2])}.duckdb"
    with Warehouse.open(copy, read_only=True) as wh:
        assert wh.con.execute("SELECT run_id, status FROM runs").fetchall() == [(record.run_id, "complete")]
