"""The episode's goal: the instruction read into a formal goal or facts (`readers`, `fact_reader`),
revised when a reading is found wrong (`goal`), its sub-goals in words (`subgoals`) and those
learned from reward (`milestones`)."""
