"""Errors a user can act on: the CLI prints their message, without a traceback."""


class PragError(Exception):
    """An error whose message says what went wrong and what to do about it."""


class SpecError(PragError):
    """A task-set spec (TOML) is invalid or names data that is missing."""


class StoreError(PragError):
    """An experience store cannot be opened or written."""


class DamagedStore(StoreError):
    """A store's file, or a value prag wrote into it, is damaged: prag writes nothing into it."""


class LLMError(PragError):
    """An LLM backend is missing, unreachable or answered unusably."""


class ConfigError(PragError):
    """A run's recorded settings cannot be read by this prag."""
