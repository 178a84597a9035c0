-- The reference reading of a TREC line (qrels or run): any run of spaces and tabs separates two
-- columns; leading and trailing blanks are ignored, so a blank line has no column.
CREATE MACRO trec_fields(line) AS
    list_filter(string_split(replace(line, chr(9), ' '), ' '), lambda f: f <> '');
