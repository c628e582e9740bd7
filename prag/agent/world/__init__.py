"""What the agent knows of the world this episode: what it observed (`observed`, its map of rooms
`roommap`), the episode's steps (`state`), where things may be (`places`), and means-ends search
over what it observed (`search`)."""
