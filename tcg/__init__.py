"""tcg — a guard station for workstations where AI coding agents run."""

__version__ = "0.1.0"
