"""The Python API: assay.evaluate and assay.evaluate_run."""
