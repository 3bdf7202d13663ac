"""The package's version (kept apart so that every module can import it)."""

__version__ = "0.1.0"
