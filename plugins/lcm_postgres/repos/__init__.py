"""The PostgreSQL implementations of the domain repositories."""
