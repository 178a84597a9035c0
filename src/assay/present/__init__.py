"""What shows runs: reports as text, JSON, CSV, Markdown and HTML, drill-down, exports, the
notebook objects."""
