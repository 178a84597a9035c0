-- The interval memo (assay.measures.memo): the bounds an interval computation gave, under the SHA-256 of all it
-- depends on (the method's code and libraries, the kind, seed, resamples and the values in order). A run stores
-- the intervals of its report; a report, gate or export reads them instead of bootstrapping again. A cache of
-- a pure function: any row may be deleted (it is computed again when needed), none is ever changed.
CREATE TABLE interval_memo (
    memo_key  VARCHAR PRIMARY KEY,
    ci_low    DOUBLE,
    ci_high   DOUBLE
);
