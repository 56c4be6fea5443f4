"""``lcm ui``: the local web explorer, rendering the operations layer's results as pages (docs/ui.md)."""
