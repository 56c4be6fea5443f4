"""Built-in gitleaks-format rule packs and the ``lcm sensitive`` command."""
