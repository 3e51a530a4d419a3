"""`replay farm`: replay every collected capsule each night, keep the history, say what changed."""
