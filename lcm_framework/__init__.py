"""LCM: Lossless Context Management for coding agents."""

__version__ = "0.1.0"
