"""The public path of the lake (docs/warehouse-and-lake.md); it lives in assay.store.lake."""

from assay.store.lake import open_lake  # noqa: F401
