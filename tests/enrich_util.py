"""What the enrichment tests share: a small catalog of real SKILL.md files, and an LLM stand-in
that reads the prompt as a model would (the skills' ids and names) and answers in the asked shape."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from .conftest import write_skill

SKILL_BLOCK = re.compile(r'<skill id="(s\d+)">\nname: ([^\n]+)\n')


def write_catalog(root: Path) -> Path:
    """Four skills, one of them private."""
    write_skill(
        root,
        "pdf-tools",
        "name: pdf-tools\ndescription: Extract text and tables from PDF files, merge and split them.",
        "# PDF tools\nUse pdfplumber to read pages.\n",
    )
    write_skill(
        root,
        "slack-post",
        "name: slack-post\ndescription: Post a message or a file to a Slack channel for the team.",
        "# Slack\nNeeds SLACK_TOKEN.\n",
    )
    write_skill(
        root,
        "docker-build",
        "name: docker-build\ndescription: Build and tag Docker images from a Dockerfile and push them.",
        "# Docker\nRun docker build.\n",
    )
    write_skill(
        root,
        "diary",
        "name: diary\ndescription: Keep my private diary entries in order, by date.\nprivate: true",
        "# Diary\nSECRET BODY: the diary lives in ~/notes.\n",
    )
    return root


def skills_in(prompt: str) -> dict[str, str]:
    """The prompt's skill ids and the names after them."""
    return dict(SKILL_BLOCK.findall(prompt))


def requests_for(name: str) -> list[str]:
    """Six requests in the default plan's shape when a catalog is English only (six English)."""
    return [
        f"{name} please",
        f"I need help with something {name} does",
        f"run {name} on report-2024.txt",
        f"quick {name} thing",
        f"can you do the {name} step now",
        f"{name} for this folder",
    ]


def answer(
    prompt: str, requests: Callable[[str], object] = requests_for, only: Mapping[str, object] | None = None
) -> str:
    """The JSON answer for a prompt: ``requests(name)`` per skill, or ``only[name]`` where given."""
    found = skills_in(prompt)
    return json.dumps(
        {sid: (only[name] if only and name in only else requests(name)) for sid, name in found.items()},
        ensure_ascii=False,
    )
