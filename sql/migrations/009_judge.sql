-- An optional judge model's verdict on each kept claim (never the generator's own model).
CREATE TABLE claim_judgments (
    run_id      VARCHAR NOT NULL,
    query_id    VARCHAR NOT NULL,
    claim_idx   INTEGER NOT NULL,
    judge_model VARCHAR NOT NULL,
    verdict     VARCHAR NOT NULL,   -- supported | unsupported | unavailable (the judge failed) | unparsed
    raw         VARCHAR,            -- the judge's reply
    error       VARCHAR,
    PRIMARY KEY (run_id, query_id, claim_idx)
);
