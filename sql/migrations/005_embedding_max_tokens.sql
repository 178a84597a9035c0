-- An embedding's identity includes the input length it truncates to.
ALTER TABLE embedding_identities ADD COLUMN max_tokens INTEGER;
