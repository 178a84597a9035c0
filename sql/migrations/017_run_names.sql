-- Names people give runs (`assay run --name NAME`, `assay tag RUN NAME`): a name names one run, a run may have
-- several names. Moving a name (`assay tag --force`) updates its row; `assay tag --delete NAME` deletes it. Not
-- kept in a lake: a lake's partitions are never rewritten, and a name is meant to move.
CREATE TABLE run_names (
    name      VARCHAR PRIMARY KEY,
    run_id    VARCHAR NOT NULL,
    named_at  TIMESTAMP NOT NULL
);
