"""Developer tool: regenerate ``migrations/manifest.json`` and ``migrations/fingerprints.json``.

``python -m lcm_postgres.snapshot postgresql://postgres@127.0.0.1/postgres`` applies the shipped
migrations one by one to throwaway schemas and records the inventory after each. Review the diff.
"""

from __future__ import annotations

import hashlib
import json
import sys
import uuid
from pathlib import Path

from . import inventory, migrate

HERE = Path(__file__).parent / "migrations"


def write_manifest() -> None:
    manifest = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(HERE.glob("*.sql"))}
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    migrate.shipped.cache_clear()


def write_fingerprints(url: str) -> None:
    import psycopg

    schema = f"lcm_snapshot_{uuid.uuid4().hex[:12]}"
    result: dict[str, list[str]] = {}
    with psycopg.connect(url, autocommit=True) as conn:
        try:
            migrate.run(conn, schema, verify=False)
            with conn.transaction(), conn.cursor() as cur:
                newest = migrate.shipped()[-1].migration_id
                result[newest] = inventory.read_inventory(cur, schema)
        finally:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    old = json.loads((HERE / "fingerprints.json").read_text())
    old.update(result)
    (HERE / "fingerprints.json").write_text(json.dumps(old, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    write_manifest()
    write_fingerprints(sys.argv[1])
