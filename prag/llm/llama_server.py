"""`python -m prag.llm.llama_server ARGS`: llama-cpp-python's OpenAI-compatible server
(`python -m llama_cpp.server ARGS`, the same arguments), its weights loaded as prag loads them:
without llama.cpp's extra CPU buffer types where the CPU advertises Intel AMX, whose kernels
segfault in the first decode there (prag.llm.local.extra_buffers_safe). The stock server has no
setting for it: on such a machine it answered `/v1/models` and died at the first completion."""
from __future__ import annotations

import runpy
import sys

import llama_cpp

from prag.llm.local import extra_buffers, extra_buffers_safe


def main() -> None:
    sys.argv = ["llama_cpp.server", *sys.argv[1:]]
    with extra_buffers(llama_cpp, extra_buffers_safe()):
        runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
