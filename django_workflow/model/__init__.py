"""What a declaration compiles to: the compiled workflow, the fields and methods it adds,
its graph, conditions, relations and log values, and the registry of workflow models.

This room reads the declaration and nothing the engine wrote; every room above may ask it.
"""
