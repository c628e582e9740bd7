"""Where a step comes from: the plan sources registered by name (`chain`), each proposing plans
for the observation (experience, search, progress); the arbiter that adopts proposals by one table
and follows the plan (`arbiter`); and the mediator that decides each step between following it and
asking (`mediator`)."""
