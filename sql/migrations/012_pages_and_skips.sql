-- Documents read from PDF and DOCX files, pages, and the files a corpus directory held but were not read.
-- Portable SQL: plain tables and views, CASE instead of engine-specific functions.

ALTER TABLE corpora ADD COLUMN readers VARCHAR;           -- JSON: what made text beyond decoding bytes (the PDF/DOCX
                                                          -- library and version, encodings given or detected); NULL: none
ALTER TABLE documents ADD COLUMN format VARCHAR;          -- markdown, text, rst, html, pdf, docx; NULL: imported, or stored before 012
ALTER TABLE documents ADD COLUMN encoding VARCHAR;        -- the codec a text file was decoded with ('utf-8', 'cp1252', ...)
ALTER TABLE documents ADD COLUMN encoding_source VARCHAR; -- default (UTF-8) | bom | given (--encoding) | detected

-- The pages of a paged document (PDF): page 1, 2, ... in file order. The pages tile the document's text:
-- every offset lies on exactly one page (the blank line between two pages belongs to the first).
CREATE TABLE document_pages (
    corpus_hash  VARCHAR NOT NULL,
    doc_id       VARCHAR NOT NULL,
    page         INTEGER NOT NULL,
    start_char   INTEGER NOT NULL,     -- [start_char, end_char) into documents.text
    end_char     INTEGER NOT NULL,
    PRIMARY KEY (corpus_hash, doc_id, page)
);

-- Every file under a corpus directory that was not read, with the reason; from the latest ingest or run
-- that read the directory (a file that is not read does not change the corpus hash).
CREATE TABLE corpus_skipped (
    corpus_hash  VARCHAR NOT NULL,
    path         VARCHAR NOT NULL,     -- under the corpus root, forward slashes; a directory ends with '/'
    extension    VARCHAR NOT NULL,     -- lower-case with its dot; '' when none
    reason       VARCHAR NOT NULL,
    PRIMARY KEY (corpus_hash, path)
);

-- The pages a chunk lies on (chunks of paged documents only). An empty span lies on the page holding it.
CREATE VIEW chunk_pages AS
SELECT c.chunk_set, c.chunk_id, c.doc_id, MIN(p.page) AS first_page, MAX(p.page) AS last_page
FROM chunks c
JOIN chunk_sets s ON s.chunk_set = c.chunk_set
JOIN document_pages p
  ON p.corpus_hash = s.corpus_hash AND p.doc_id = c.doc_id
 AND p.start_char < CASE WHEN c.end_char > c.start_char THEN c.end_char ELSE c.start_char + 1 END
 AND p.end_char > c.start_char
GROUP BY c.chunk_set, c.chunk_id, c.doc_id;

-- The pages a resolved gold entry lies on (entries in paged documents only).
CREATE VIEW gold_pages AS
SELECT g.judgments_hash, g.corpus_hash, g.query_id, g.gold_idx, g.doc_id,
       MIN(p.page) AS first_page, MAX(p.page) AS last_page
FROM gold_spans g
JOIN document_pages p
  ON p.corpus_hash = g.corpus_hash AND p.doc_id = g.doc_id
 AND p.start_char < CASE WHEN g.end_char > g.start_char THEN g.end_char ELSE g.start_char + 1 END
 AND p.end_char > g.start_char
GROUP BY g.judgments_hash, g.corpus_hash, g.query_id, g.gold_idx, g.doc_id;

-- The pages of every hit of every complete run (hits in paged documents only).
CREATE VIEW hit_pages AS
SELECT h.run_id, h.stage, h.query_id, h.rank, h.chunk_id, h.doc_id, cp.first_page, cp.last_page
FROM hits h
JOIN complete_runs r ON r.run_id = h.run_id
JOIN chunk_pages cp ON cp.chunk_set = r.chunk_set AND cp.chunk_id = h.chunk_id;

-- The pages of every valid citation of every complete run (citations of paged documents only).
CREATE VIEW citation_pages AS
SELECT c.run_id, c.query_id, c.claim_idx, c.cite_idx, c.doc_id, MIN(p.page) AS first_page, MAX(p.page) AS last_page
FROM citations c
JOIN complete_runs r ON r.run_id = c.run_id
JOIN document_pages p
  ON p.corpus_hash = r.corpus_hash AND p.doc_id = c.doc_id
 AND p.start_char < CASE WHEN c.end_char > c.start_char THEN c.end_char ELSE c.start_char + 1 END
 AND p.end_char > c.start_char
WHERE c.valid
GROUP BY c.run_id, c.query_id, c.claim_idx, c.cite_idx, c.doc_id;
