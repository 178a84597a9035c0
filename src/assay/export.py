"""The public path of the exports (docs/exports.md); they live in assay.present.export."""

from assay.present.export import export_runs  # noqa: F401
