"""Facts of a capsule: their keys (per-format scopes from the readers), diff and inspect."""
