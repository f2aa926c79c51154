"""What the engine wrote, read back: attempts, claims, votes, owed effects, SLA clocks
and the log, each module named like its writer in ``engine/`` with ``_read`` after it;
and what is built from them for people: actions on offer, the inbox, where records
stand, the gauges and the words.

Nothing here writes; the engine may ask these modules, the surfaces read through them.
"""
