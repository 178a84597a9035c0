"""Where a computed run is written: a warehouse file, or its own partition of a lake (a directory or s3:// URL).

A sink gives a run what it reads while it computes (``reads``: the embedding cache, stored
calibrations, ``@name`` collections) and takes the finished ``RunRecord`` (``write``), returning
where it went, for the line that says so.
"""

from __future__ import annotations

from pathlib import Path


def store_run(warehouse, record) -> None:
    """A run's rows and its measure values, in one transaction: the warehouse stores the rows, the measures
    score them (``store_run_rows``). Then the BI snapshot is refreshed (assay.store.snapshot.refresh: after the
    commit, so nothing there can fail or undo the run)."""
    from assay.store.snapshot import refresh

    with warehouse.transaction():
        store_run_rows(warehouse, record)
    refresh(warehouse)


def store_run_rows(warehouse, record) -> None:
    """A run's rows and its measure values inside the caller's transaction (a sweep writes all its runs in one):
    the same SQL as every report computes the default measures' per-question values and intervals from the rows
    just written."""
    from assay.measures.values import score_run

    warehouse.write_run_rows(record)
    score_run(warehouse, record.run_id)


class WarehouseSink:
    """One warehouse file: read through short read-only opens, written in one short transaction
    (``Warehouse.brief``), so other processes read it, and run beside it, while this run computes."""

    def __init__(self, path=None, snapshot: bool | None = None):
        self.path, self.snapshot, self._wh = path, snapshot, None

    def reads(self):
        if self._wh is None:
            from assay.store.warehouse import Warehouse

            self._wh = Warehouse.brief(self.path, snapshot=self.snapshot)
        return self._wh

    def path_exists(self) -> bool:
        return self.reads().path.is_file()

    def check(self) -> None:
        """Before any work: the write at the end will succeed (assay.store.warehouse.check_writable)."""
        self.reads().check_writable()

    def write(self, record, name: str | None = None) -> str:
        """Write the run; ``name``: give it this name (assay.store.run_refs.tag) once it is stored."""
        wh = self.reads()
        store_run(wh, record)
        if name is not None:
            from assay.store.run_refs import tag

            tag(wh, record.run_id, name)
        return str(wh.path)

    def close(self) -> None:
        if self._wh is not None:
            self._wh.close()


class LakeSink:
    """A lake directory: the run becomes its own partitions (``assay.store.lake.writer``), with no lock and no
    warehouse. Reads come from an empty in-memory warehouse: vectors are computed afresh for each run,
    and stored calibrations and ``@name`` collections (which live in a warehouse) are not available."""

    def __init__(self, lake):
        from assay.store.lake.location import lake_location

        self.location = lake_location(lake)  # a path, an s3:// URL, or a LakeLocation the CLI built
        self.path, self._wh = self.location.path, None

    def reads(self):
        if self._wh is None:
            from assay.store.lake.writer import memory_warehouse

            self._wh = memory_warehouse()
            self._wh.path = Path(f"{self.path} (a lake run reads no warehouse)")
        return self._wh

    def path_exists(self) -> bool:
        return self.location.local and self.path.is_dir()

    def check(self) -> None:
        """Before any work: the lake can take the run (assay.store.lake.writer.check_lake)."""
        from assay.store.lake.writer import check_lake

        check_lake(self.location)

    def write(self, record, name: str | None = None) -> str:
        from assay.measures.values import score_run
        from assay.store.lake.writer import write_run

        write_run(self.location, record, score=score_run)
        return f"lake {self.location}"

    def close(self) -> None:
        if self._wh is not None:
            self._wh.close()
