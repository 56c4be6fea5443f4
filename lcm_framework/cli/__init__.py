"""The ``lcm`` command line. Subcommands come from the ``lcm_register_commands`` hook."""
