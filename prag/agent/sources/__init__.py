"""Where a step comes from besides asking: the plan sources registered by name (`chain`), each
offering the actor (`actor`) a plan for the observation (`plan_source`: experience, search,
progress), and the mediator that decides each step between following the plan and asking."""
