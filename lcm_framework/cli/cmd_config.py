"""``lcm config get|set|unset|list``."""

from __future__ import annotations

import argparse

from ..app import App
from ..config.files import set_key
from ..config.resolve import Config, display_value, load_config, read_toml
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from ..output import add_json
from ..storage.selection import installed_backend
from .output import print_json, print_table


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    get = sub.add_parser(
        "get",
        help="print one key's value",
        description="Without --effective: the value the configuration files give (or the default). "
        "With --effective: the value this run uses, after LCM_* variables and --set flags.",
    )
    get.add_argument("key", help="a configuration key such as summarizer.provider (`lcm config list` lists them)")
    get.add_argument("--effective", action="store_true", help="include LCM_* variables and --set flags")
    get.add_argument("--show-source", action="store_true", help="also print where the value came from")
    add_json(get)
    st = sub.add_parser("set", help="write a key to the global or project file")
    st.add_argument("key", help="a configuration key such as summarizer.provider (`lcm config list` lists them)")
    st.add_argument("value", help="the value; lists take newline-separated items or repeat `config set`")
    scope = st.add_mutually_exclusive_group()
    scope.add_argument("--global", dest="scope", action="store_const", const="global",
                       help="write $LCM_HOME/config.toml (default)")
    scope.add_argument("--project", dest="scope", action="store_const", const="project",
                       help="write .lcm/config.toml in the project root")
    un = sub.add_parser("unset", help="remove a key from the global or project file")
    un.add_argument("key", help="a configuration key such as summarizer.provider (`lcm config list` lists them)")
    unscope = un.add_mutually_exclusive_group()
    unscope.add_argument("--global", dest="scope", action="store_const", const="global",
                         help="edit $LCM_HOME/config.toml (default)")
    unscope.add_argument("--project", dest="scope", action="store_const", const="project",
                         help="edit .lcm/config.toml in the project root")
    ls = sub.add_parser("list", help="every key with its effective value, source and owner (core or a plugin)")
    add_json(ls)


def run(args: argparse.Namespace, app: App) -> int:
    config = app.config
    settings = config.settings
    if args.action not in ("list", "unset") or (args.action == "unset" and not _listed(config, args)):
        settings.lookup(args.key)  # an unknown key: ConfigError naming the closest key and the plugins
    if args.action == "get":
        if not args.effective:
            config = load_config(project=config.project_root, env=config.env, files_only=True, plugins=app.plugins,
                                 repairing=True)
        shown = config.display(args.key)
        if args.json:
            print_json({"key": args.key, "value": shown, "source": config.source(args.key)})
        elif args.show_source:
            print(f"{shown}\t({config.source(args.key)})")
        else:
            print(shown)
    elif args.action == "set":
        value = settings.parse(args.key, args.value, "command line")
        check = settings.lookup(args.key).check
        if check is not None and value is not None:
            check(value)
        if args.key == "storage.backend":  # only a backend a loaded plugin provides: a typo breaks no command
            installed_backend(app.plugins, value, "command line")
        path = config.project_file if args.scope == "project" else config.global_file
        set_key(path, args.key, value)
        print(f"{args.key} = {display_value(settings.lookup(args.key), value)} -> {path}")
    elif args.action == "unset":
        path = config.project_file if args.scope == "project" else config.global_file
        set_key(path, args.key, None)
        print(f"removed {args.key} from {path}")
    else:
        rows = [(key, config.display(key), config.source(key), settings.owners[key]) for key in sorted(settings)]
        if args.json:
            print_json([{"key": k, "value": v, "source": s, "owner": o} for k, v, s, o in rows])
        else:
            print_table(rows, ["key", "value", "source", "owner"])
    return 0


def _listed(config: Config, args: argparse.Namespace) -> bool:
    """Whether the file ``unset`` edits names the key, known or not (removing an unknown key repairs it)."""
    path = config.project_file if args.scope == "project" else config.global_file
    section, _, name = args.key.partition(".")
    body = read_toml(path).get(section) if path.is_file() else None
    return isinstance(body, dict) and name in body


COMMAND = CommandSpec(
    name="config",
    help="read and write configuration",
    description=(
        "Configuration precedence: built-in defaults < $LCM_HOME/config.toml < <project>/.lcm/config.toml\n"
        "< LCM_* environment variables < --set KEY=VALUE flags. Secret values are masked.\n"
        "Keys come from the core and the loaded plugins (`lcm config list` names each key's owner)."
    ),
    configure=configure,
    run=run,
    repairs_config=True,
)
