"""Text shared by pages, the explorer and the demo: number formats, formulas, node names."""

__all__ = []
