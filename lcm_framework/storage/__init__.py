"""Backend-neutral storage: contracts, records, validation and backend selection."""
