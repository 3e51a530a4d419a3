"""replay: hermetic, container-based replay of recorded command runs."""

__version__ = "0.1.0"
