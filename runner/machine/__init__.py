"""The machine replay runs on: what it has (doctor), and what replay left on it (gc of
containers, networks, rules, images and caches; the image usage ledger)."""
