"""The OntoSkills format as a skill loader: ``ontoskill.ttl`` modules (walked, or a ``.ttl`` root)
read by :mod:`.reader`, and the MiniLM vectors an ``intents.json`` ships (:mod:`.intents`).
Importing this module registers it (:mod:`skillpilot.skills.loaders`)."""

from __future__ import annotations

from ..skills.loaders import Loader, register_loader
from .intents import precomputed_vectors
from .reader import MODULE_FILE, read_ontoskill

LOADER = Loader("ontoskills", MODULE_FILE, ".ttl", read_ontoskill, precomputed_vectors)
register_loader(LOADER)
