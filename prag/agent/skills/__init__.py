"""What the agent can do with a goal's words and the scene, as search uses it: the focuses and
branches an instruction names (`instructed`, `conditions`), comparisons, making, carrying, things
described, irrevocable actions and their answers, and finding a thing (`explore`)."""
