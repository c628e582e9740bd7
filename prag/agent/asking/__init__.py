"""What the agent does when the mediator asks: the LLM's step (`llm_step`: retrieve, prompt, ask,
check the answer), its prompt and hints, the draw past the LLM budget (`novelty`), and the person
beside the LLM (`asking`)."""
