"""The embedded SQLite storage backend: one database file per project under ``$LCM_HOME/projects``."""
