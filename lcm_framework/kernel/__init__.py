"""The plugin kernel: the hooks a plugin implements (``hookspecs``), the records it registers through them
(``extensions``, a capability's arguments turned into its schema, checks and CLI options by ``arguments``), what
its commands and capabilities receive (``host``), and the manager that loads plugins once per process and
indexes what they register (``plugins``).

Nothing in the kernel loads plugins on its own initiative: each process (the ``lcm`` command, the daemon, an
ingest worker, the MCP server) calls ``build_plugins`` once at its top and passes the result down.
"""
