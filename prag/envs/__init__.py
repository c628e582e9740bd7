"""Task families behind one environment interface (see `prag.envs.base`)."""
