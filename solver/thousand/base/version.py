"""The version of thousand: the package's, and the one stored tables record."""

__version__ = "0.2.0"
