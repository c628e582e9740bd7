"""prag: a progressive retrieval planner for embodied everyday tasks."""

__version__ = "0.1.0"
