"""The version of mctsviz, in the bottom layer so that any layer may name it."""

__version__ = "0.3.0"
