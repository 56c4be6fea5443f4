"""Team memory across machines: passive events delivered from each machine's outbox to a shared inbox.

``facts`` (what a PostToolUse hook keeps of a tool call), ``transport`` (the scrubbed form a machine
delivers), ``effects`` (what applying one event records, and the team-level learning it triggers),
``learning`` (local passive learning in the daemon), ``worker`` (the fenced drain), ``projects`` (project
storage for the worker), ``status`` (what ``lcm sync status``, ``lcm status`` and ``lcm doctor`` show),
``replay`` (``lcm sync replay``: a quarantined event's second chance, applied once).
See ``docs/postgresql.md`` ("Several machines").
"""
