"""The SQLite experience store: it owns every table (runs, episodes, steps, embeddings,
corrections and the caches), its schema and migrations, export/import and its statistics."""
from prag.store.database import Store, now
from prag.store.records import EpisodeRecord, RunRecord, StepRecord

__all__ = ["EpisodeRecord", "RunRecord", "StepRecord", "Store", "now"]
