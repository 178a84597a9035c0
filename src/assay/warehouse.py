"""The public path of the warehouse (docs/install.md, docs/warehouse-and-lake.md); it lives in
assay.store.warehouse."""

from assay.store.warehouse import Warehouse  # noqa: F401
