"""Where runs are kept: the DuckDB warehouse and its migrations, hits, vectors, tokens, named
collections, run references and status, the lake, the sql shell."""
