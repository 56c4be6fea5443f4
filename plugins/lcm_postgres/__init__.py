"""The PostgreSQL storage backend of LCM (shared memory for several machines)."""
