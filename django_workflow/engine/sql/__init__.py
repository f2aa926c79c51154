"""Every statement the engine sends by hand, its cursor, and the queries compiled once:
the engine's raw SQL lives here alone, as Django keeps ``db/models/sql`` under the ORM.
"""
