"""The plugin's hook: SkillPilot's standard-library hook client, as `skillpilot setup` installs it.

    python3 -S ${CLAUDE_PLUGIN_ROOT}/hooks/hook.py claude-code     (hooks.json; no -P: Python 3.11+ only)

``skillpilot hook claude-code`` imports the CLI, the router and numpy before its one request
(0.6-1.7 s a hook event, four events a turn); the client it forwards to
(``skillpilot/adapters/hook_client.py``) needs the standard library only. This file finds that
client in the installed package without importing SkillPilot and runs it in this process: the
interpreter of the ``skillpilot`` command on PATH (its ``#!`` line, either form pip writes) is
asked once where the package is (``importlib.util.find_spec``, which imports nothing), and the
answer is kept in ``$SKILLPILOT_HOME/hook-client.path`` until that file is gone. Fail open: any
problem is one line on stderr and exit 0, as the client's own.
"""

import os
import sys

CACHE_FILE = "hook-client.path"
WHERE = (
    "import importlib.util, os; spec = importlib.util.find_spec('skillpilot'); "
    "print(os.path.join(list(spec.submodule_search_locations)[0], 'adapters', 'hook_client.py'))"
)


def home_dir(argv):
    """``--home DIR``, else ``$SKILLPILOT_HOME``, else ``~/.skillpilot`` (the client's own rule)."""
    if "--home" in argv and argv.index("--home") + 1 < len(argv):
        return os.path.expanduser(argv[argv.index("--home") + 1])
    return os.path.expanduser(os.environ.get("SKILLPILOT_HOME") or "~/.skillpilot")


def interpreter(command):
    """The Python that runs the console script ``command``: its ``#!`` line, or for a long path
    pip's ``#!/bin/sh`` + ``'''exec' PYTHON "$0" "$@"`` form."""
    with open(command, encoding="utf-8", errors="replace") as script:
        first, second = script.readline().strip(), script.readline().strip()
    if first.startswith("#!") and not first.endswith("/sh"):
        return first[2:].split()[0]
    if second.startswith("'''exec' "):
        return second.split()[1]
    raise RuntimeError(f"cannot tell which Python runs {command}")


def client_path(home):
    cache = os.path.join(home, CACHE_FILE)
    try:
        with open(cache, encoding="utf-8") as handle:
            path = handle.read().strip()
        if os.path.isfile(path):
            return path
    except OSError:
        pass
    import shutil  # only on the first run: these imports cost more than the rest of the hook
    import subprocess

    command = shutil.which("skillpilot")
    if command is None:
        raise RuntimeError("the `skillpilot` command is not on PATH: pip install skillpilot")
    found = subprocess.run([interpreter(command), "-c", WHERE], capture_output=True, text=True, timeout=30)
    path = found.stdout.strip()
    if found.returncode != 0 or not os.path.isfile(path):
        raise RuntimeError(f"{command} has no SkillPilot hook client: {found.stderr.strip()[-200:]}")
    os.makedirs(home, exist_ok=True)
    with open(cache, "w", encoding="utf-8") as handle:
        handle.write(path)
    return path


def main():
    try:
        path = client_path(home_dir(sys.argv[1:]))
    except Exception as exc:
        print(f"skillpilot hook: skipped ({type(exc).__name__}: {exc})", file=sys.stderr)
        return 0
    sys.argv = [path, *sys.argv[1:]]
    with open(path, encoding="utf-8") as source:
        code = compile(source.read(), path, "exec")
    exec(code, {"__name__": "__main__", "__file__": path})  # the client ends with sys.exit(main())
    return 0


if __name__ == "__main__":
    sys.exit(main())
