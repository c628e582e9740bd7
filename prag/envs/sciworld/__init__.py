"""The ScienceWorld family (Wang et al., EMNLP 2022; PyPI `scienceworld==1.2.3`).

A description of ScienceWorld's interface and nothing more: how its object tree and its look
text read as prag's scene graphs (`scene`), which admissible actions it offers and how its
answers are taken (`env`), its JVM (`engine`), and its Domain (`domain`). No per-task recipe, no
action model, no placement table: what a task needs beyond this description prag learns from its
own rounds.
"""
