"""Every command declared once (catalog.py) in the terms of spec.py: the CLI, the MCP tools, the
result schemas, the help lists and the docs are made from it."""
