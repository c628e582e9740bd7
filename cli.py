"""Run prag from a checkout: `python cli.py …` is the same as `prag …`."""
from prag.cli import main

if __name__ == "__main__":
    main()
