"""What every layer may use: errors, escaping, hashing, option ranges, HTTP and credentials, progress,
the optional parts, SQL files, plain-text tables and JSON output."""
