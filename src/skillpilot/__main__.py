"""``python -m skillpilot`` runs the CLI."""

from .cli import main

main()
