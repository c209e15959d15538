"""SkillPilot inside the real Gemini CLI and Codex CLI, driven offline.

Each CLI runs in a throwaway HOME whose user skill folder holds real SKILL.md folders and whose
hook file carries SkillPilot's hooks, written by ``skillpilot setup HOST`` as a user runs it; the
model is a scripted endpoint on 127.0.0.1 in the CLI's own wire protocol that records every
request (``skillpilot.bench.hostcli``; what only the tests read is in ``tests/harness``). The
assertions read what the CLI actually sent the model: its own skill listing and the hook's
context beside it, and what the service learned.

Marked ``real_cli`` (CI-only, a minute or more): skipped without the CLIs, required with CI=true.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

pytest.importorskip("fastapi")

from skillpilot import SkillPilot  # noqa: E402
from skillpilot.adapters.hosts import get_host  # noqa: E402
from skillpilot.bench.hostcli import Recorded, Recorder, Reply, Script, text_reply  # noqa: E402
from skillpilot.bench.hostcli import codex as codex_driver  # noqa: E402
from skillpilot.bench.hostcli import gemini as gemini_driver  # noqa: E402
from skillpilot.feedback import FeedbackStore  # noqa: E402

from .conftest import write_skill  # noqa: E402
from .harness import codex as codex_harness  # noqa: E402
from .harness import gemini as gemini_harness  # noqa: E402
from .host_cli_util import host_cli  # noqa: E402
from .surfaces_util import SKILLS, advertised_service, wait_until_indexed  # noqa: E402

pytestmark = pytest.mark.real_cli

USER_SKILLS = ["git-commit", "csv-analyze", "email-send", "translate-text", "changelog-writer"]
SRC = Path(__file__).resolve().parents[1] / "src"


@dataclass(frozen=True)
class HostCase:
    """One host under test: its driver and what the tests alone read, where its user and project
    skills live, its hook file."""

    name: str
    driver: ModuleType
    harness: ModuleType
    user_skills: str  # below HOME
    project_skills: str  # below the project folder
    hook_file: str  # below HOME

    def skill_ref(self, home: Path, skill: str) -> str:
        """What the scripted model names to choose ``skill``: its name, or the SKILL.md Codex reads."""
        return str(home / self.user_skills / skill / "SKILL.md") if self.name == "codex" else skill


CASES = {
    "gemini": HostCase(
        "gemini", gemini_driver, gemini_harness, ".gemini/skills", ".gemini/skills", ".gemini/settings.json"
    ),
    "codex": HostCase("codex", codex_driver, codex_harness, ".agents/skills", ".agents/skills", ".codex/hooks.json"),
}


@dataclass
class Session:
    """One host's HOME, SkillPilot home and scripted endpoint (one for the module: Codex keeps its
    URL in config.toml); ``script`` is what the model answers in the current test."""

    case: HostCase
    binary: Path
    path: str
    home: Path
    skillpilot_home: Path
    api: Recorder
    script: Script = staticmethod(lambda _request: text_reply("Done."))
    ids: dict[str, str] = field(default_factory=dict)  # skill folder name -> skill id

    def skill_md(self, folder: str) -> str:
        return str(self.home / self.case.user_skills / folder / "SKILL.md")

    def env(self) -> dict[str, str]:
        env = self.case.driver.environment(self.home, self.api, self.path)
        return {**env, "SKILLPILOT_HOME": str(self.skillpilot_home), "PYTHONPATH": str(SRC)}


def setup(session: Session, *args: str) -> dict[str, object]:
    """``skillpilot setup HOST`` as a user runs it, with the session's HOME."""
    env = {
        **os.environ,
        "HOME": str(session.home),
        "PATH": session.path,
        "PYTHONPATH": str(SRC),
        "SKILLPILOT_HOME": str(session.skillpilot_home),
    }
    for name in ("CODEX_HOME", "GEMINI_CLI_HOME"):
        env.pop(name, None)
    command = [sys.executable, "-m", "skillpilot", "setup", session.case.name, "--json", *args]
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report: dict[str, object] = json.loads(proc.stdout)
    return report


def host_files(home: Path, case: HostCase) -> dict[str, bytes]:
    """The host files setup may touch (its hook file, Codex's config.toml) and their backups."""
    names = [case.hook_file, ".codex/config.toml"]
    names += [f"{name}.bak" for name in names]
    return {name: (home / name).read_bytes() for name in names if (home / name).is_file()}


@pytest.fixture(scope="module", params=sorted(CASES))
def session(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    """HOME with the user skills and SkillPilot's hooks, and a running service over those skills."""

    def user_skills(folder: Path) -> None:
        for name in USER_SKILLS:
            shutil.copytree(SKILLS / name, folder / name)

    with hosted(request.param, tmp_path_factory.mktemp(request.param), user_skills) as current:
        yield current


@contextmanager
def hosted(name: str, root: Path, write_skills: Callable[[Path], None], **options: Any) -> Iterator[Session]:
    """Host ``name`` in a HOME below ``root`` whose user skill folder ``write_skills`` fills, with
    SkillPilot's hooks set up and a running service (a ``SkillPilot`` with ``options``) over those
    skills; on the way out, uninstall leaves the host's files as they were."""
    case = CASES[name]
    launcher, env = host_cli(case.name)
    path = f"{launcher.parent}:{env['PATH']}"
    home, skillpilot_home = root / "home", root / "skillpilot"
    write_skills(home / case.user_skills)
    pilot = SkillPilot(home=skillpilot_home, preconditions=False, **options)
    pilot.index([home / case.user_skills])
    pilot.route("warm up")  # a service answers warm; the hook gives up on one that takes seconds
    ids = {Path(s.skill.path).name: s.id for s in pilot.skills()}
    with case.driver.serve(lambda request: current.script(request)) as api:
        current = Session(case, launcher, path, home, skillpilot_home, api, ids=ids)
        # The CLI's config must exist before setup adds the hooks (Codex keeps both in ~/.codex).
        current.env()
        before = host_files(home, case)
        setup(current, "--no-start")  # this process serves the home
        # The service (this process) finds the host's skills where the host keeps them for this HOME.
        with pytest.MonkeyPatch.context() as patch, advertised_service(pilot):
            patch.setenv("HOME", str(home))
            patch.delenv("CODEX_HOME", raising=False)
            patch.delenv("GEMINI_CLI_HOME", raising=False)
            yield current
    pilot.close()
    setup(current, "--uninstall")
    after = host_files(home, case)
    # Uninstall leaves the host's files as they were (the CLIs' own state files aside).
    assert {k: v for k, v in after.items() if k in before} == before
    assert set(after) - set(before) <= {f"{case.hook_file}.bak", ".codex/config.toml.bak"}


def run(session: Session, prompt: str, cwd: Path, script: Script | None = None) -> list[Recorded]:
    session.script = script or (lambda _request: text_reply("Done."))
    session.api.clear()
    session.case.driver.run(session.binary, prompt, cwd, session.env())
    return session.api.model_requests()


def test_the_hooks_context_reaches_the_model_and_names_a_skill_the_host_lists(session: Session, tmp_path: Path) -> None:
    driver = session.case.driver
    first = run(session, "commit my changes", tmp_path)[0]
    context = driver.context(first)
    assert context is not None, "the hook's context is not in the model request"
    listing = driver.listing(first)
    assert set(USER_SKILLS) <= set(listing), listing
    assert listing["git-commit"], "the host listed git-commit without its description"
    assert "SkillPilot routed this prompt to the skill `git-commit`" in context, context
    if session.case.name == "gemini":
        assert "activate the skill `git-commit` with the activate_skill tool" in context, context
    else:
        skill_md = session.case.harness.listing_paths(first)["git-commit"]
        assert f"read {skill_md} and follow its instructions" in context, context


def test_a_passthrough_prompt_adds_nothing(session: Session, tmp_path: Path) -> None:
    driver = session.case.driver
    requests = run(session, "what is the capital of France?", tmp_path)
    assert "git-commit" in driver.listing(requests[0]), "the request has no skill listing to compare with"
    assert all(driver.context(request) is None for request in requests)
    assert "SkillPilot" not in json.dumps([r.body for r in requests])


def test_a_project_skill_from_the_cwd_is_routed(session: Session, tmp_path: Path) -> None:
    driver = session.case.driver
    project = tmp_path / "project"
    shutil.copytree(SKILLS / "web-scrape", project / session.case.project_skills / "web-scrape")
    run(session, "hello", project)
    wait_until_indexed(session.skillpilot_home, project / session.case.project_skills)
    first = run(session, "scrape the product prices off https://example.com/shop into a CSV", project)[0]
    assert "web-scrape" in driver.listing(first), "the host did not list the project skill"
    context = driver.context(first)
    assert context is not None and "`web-scrape`" in context, context


def test_the_skill_the_model_chooses_is_stored_as_an_implicit_signal(session: Session, tmp_path: Path) -> None:
    """A soft route the model answers by choosing the skill (Gemini: activate_skill; Codex: it
    reads the SKILL.md): the host's tool hook reaches the service, which stores an implicit confirm."""
    driver = session.case.driver
    prompt = "how do I say good morning to my team in Japanese?"

    def script(request: Recorded) -> Reply:
        if session.case.harness.replied_to_tool(request):
            return text_reply("おはようございます")
        return Reply(skill=session.case.skill_ref(session.home, "translate-text"))

    requests = run(session, prompt, tmp_path, script)
    context = driver.context(requests[0])
    assert context is not None and "may fit this prompt" in context, context
    assert len(requests) >= 2, "the model's choice got no tool result"
    store = FeedbackStore(session.skillpilot_home / "feedback.sqlite")
    signals = [s for s in store.signals() if s.query == prompt]
    store.close()
    assert [(s.kind, s.skill, s.implicit) for s in signals] == [("confirmed", "translate-text", True)], signals


# Two SKILL.md that both say mcp-builder, and a name that is not its folder's.
SAME_NAMES = {
    "mcp-builder": (
        "mcp-builder",
        "Build MCP servers in Python with FastMCP. Use when the user wants an MCP server in Python.",
    ),
    "mcp-builder-composiohq": (
        "mcp-builder",
        "Build MCP servers in TypeScript with the official SDK. Use when the user wants an MCP server in TypeScript.",
    ),
    "ahrefs-automation": ("Ahrefs Automation", "Automate Ahrefs SEO reports: backlinks, keywords and site audits."),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def same_names(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    """The :data:`SAME_NAMES` skills in the host's user folder; every route soft, so that the
    model's choice is a signal."""

    def write(folder: Path) -> None:
        for name, (title, description) in SAME_NAMES.items():
            write_skill(folder, name, f"name: {title}\ndescription: {description}", f"# {title}\n\n{description}\n")

    root = tmp_path_factory.mktemp(f"{request.param}-names")
    with hosted(request.param, root, write, soft_threshold=0.01, hard_threshold=1.0) as current:
        yield current


def chooses(session: Session, folder: str) -> Script:
    """The model's script: choose the skill in ``folder`` the host's way (Gemini: activate it by
    the name the host lists; Codex: read its SKILL.md), then answer."""
    ref = session.skill_md(folder) if session.case.name == "codex" else SAME_NAMES[folder][0]

    def script(request: Recorded) -> Reply:
        return text_reply("Done.") if session.case.harness.replied_to_tool(request) else Reply(skill=ref)

    return script


def test_same_name_skills_are_named_as_the_host_lists_them_and_the_signal_goes_to_the_copy_loaded(
    same_names: Session, tmp_path: Path
) -> None:
    session, driver = same_names, same_names.case.driver
    typescript = "build an MCP server in TypeScript with the official SDK"
    first = run(session, typescript, tmp_path)[0]
    context = driver.context(first) or ""
    if session.case.name == "gemini":
        # Gemini lists one mcp-builder, mcp-builder/'s: the TypeScript copy cannot be activated,
        # and naming `mcp-builder` for it would load the Python one.
        assert driver.listing(first)["mcp-builder"] == SAME_NAMES["mcp-builder"][1]
        assert session.skill_md("mcp-builder-composiohq") not in json.dumps(first.body)
        assert "mcp-builder" not in context, context
    else:
        # Codex lists both copies by their paths; the context hands the TypeScript one over by its path.
        listed = codex_driver.SKILL_LINE.findall(codex_driver.listing_text(first))
        assert sorted(short for name, _, short in listed if name == "mcp-builder") == [
            "r0/mcp-builder-composiohq/SKILL.md",
            "r0/mcp-builder/SKILL.md",
        ]
        assert f"read {session.skill_md('mcp-builder-composiohq')} and follow its instructions" in context, context

    python = "build an MCP server in Python with FastMCP"
    requests = run(session, python, tmp_path, chooses(session, "mcp-builder"))
    context = driver.context(requests[0]) or ""
    assert "may fit this prompt" in context and "`mcp-builder`" in context, context
    assert len(requests) >= 2, "the model's choice got no tool result"

    seo = run(session, "automate my Ahrefs SEO reports", tmp_path)[0]
    assert "Ahrefs Automation" in driver.listing(seo)
    context = driver.context(seo) or ""
    assert "the skill `Ahrefs Automation` may fit this prompt" in context, context

    store = FeedbackStore(session.skillpilot_home / "feedback.sqlite")
    signals = [(s.kind, s.skill, s.implicit) for s in store.signals() if s.query == python]
    store.close()
    # The copy the host loaded, the one SkillPilot named first: a confirm, not a correction.
    assert signals == [("confirmed", session.ids["mcp-builder"], True)], signals


EXTENSION = Path(__file__).resolve().parents[1] / "adapters" / "gemini"


@dataclass(frozen=True)
class GeminiHome:
    """The real Gemini CLI in a throwaway HOME."""

    launcher: Path
    path: str
    home: Path

    def gemini(self, *args: str, answer: str = "") -> subprocess.CompletedProcess[str]:
        env = {"PATH": self.path, "HOME": str(self.home), "PYTHONPATH": str(SRC)}
        return subprocess.run(
            [str(self.launcher), *args], env=env, capture_output=True, text=True, timeout=300, input=answer
        )


def with_extension(home: Path) -> GeminiHome:
    """Gemini CLI in ``home`` with the user skills in ``~/.gemini/skills`` and ``adapters/gemini``
    installed as a user installs it."""
    launcher, env = host_cli("gemini")
    for name in USER_SKILLS:
        shutil.copytree(SKILLS / name, home / ".gemini" / "skills" / name)
    # The extension runs `skillpilot hook gemini`: this interpreter's scripts folder on PATH.
    cli = GeminiHome(launcher, f"{Path(sys.executable).parent}:{launcher.parent}:{env['PATH']}", home)
    # Gemini asks whether to trust the extension's folder (a local source); the user says yes.
    installed = cli.gemini("extensions", "install", str(EXTENSION), "--consent", answer="y\n")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return cli


@contextmanager
def served(cli: GeminiHome, folders: list[Path]) -> Iterator[tuple[Recorder, dict[str, str]]]:
    """A running service over ``folders`` in the default SkillPilot home (a host may not pass
    SKILLPILOT_HOME on), and the scripted endpoint with the environment of a run against it."""
    pilot = SkillPilot(home=cli.home / ".skillpilot", preconditions=False)
    pilot.index(folders)
    pilot.route("warm up")
    try:
        with (
            pytest.MonkeyPatch.context() as patch,
            advertised_service(pilot),
            gemini_driver.serve(lambda _request: text_reply("Done.")) as api,
        ):
            patch.setenv("HOME", str(cli.home))
            patch.delenv("GEMINI_CLI_HOME", raising=False)
            yield api, {**gemini_driver.environment(cli.home, api, cli.path), "PYTHONPATH": str(SRC)}
    finally:
        pilot.close()


def test_the_gemini_extension_installs_routes_and_uninstalls_with_gemini_extensions(tmp_path: Path) -> None:
    """``adapters/gemini`` as Gemini CLI installs it (``gemini extensions install``): its hooks
    are the ones ``setup gemini`` writes, they route inside the real CLI, and ``gemini extensions
    uninstall`` takes them out."""
    manifest = json.loads((EXTENSION / "gemini-extension.json").read_text(encoding="utf-8"))
    hooks = json.loads((EXTENSION / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    assert {(e, g.get("matcher")) for e, gs in hooks.items() for g in gs} == {
        (s.event, s.matcher) for s in get_host("gemini").hooks
    }
    home = tmp_path / "home"
    cli = with_extension(home)
    assert (home / ".gemini" / "extensions" / manifest["name"] / "hooks" / "hooks.json").is_file()
    listed = cli.gemini("extensions", "list")
    assert manifest["name"] in listed.stdout + listed.stderr
    with served(cli, [home / ".gemini" / "skills"]) as (api, run_env):
        gemini_driver.run(cli.launcher, "commit my changes", tmp_path, run_env)
        first = api.model_requests()[0]
    context = gemini_driver.context(first)
    assert context is not None and "activate the skill `git-commit`" in context, context
    removed = cli.gemini("extensions", "uninstall", manifest["name"])
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert not (home / ".gemini" / "extensions" / manifest["name"]).exists()


def test_the_gemini_extension_names_a_project_skill_only_once_gemini_trusts_the_folder(tmp_path: Path) -> None:
    """Gemini CLI lists a workspace's skills in a trusted folder only (folder trust is on by
    default) and runs an extension's hooks in any folder (the settings.json hooks of ``setup
    gemini`` only in a trusted one). In an untrusted folder, in an interactive session (headless
    ``gemini -p`` refuses the folder), the extension's hook names the user's skills but not the
    project's, even indexed; trusted in ``trustedFolders.json``, the project's skill is listed and
    named."""
    home, project = tmp_path / "home", tmp_path / "project"
    shutil.copytree(SKILLS / "web-scrape", project / ".gemini" / "skills" / "web-scrape")
    cli = with_extension(home)
    rules = home / ".gemini" / "trustedFolders.json"
    rules.write_text(json.dumps({str(project): "DO_NOT_TRUST"}), encoding="utf-8")
    scrape = "scrape the product prices off https://example.com/shop into a CSV"
    with served(cli, [home / ".gemini" / "skills", project / ".gemini" / "skills"]) as (api, run_env):
        untrusted = gemini_harness.interactive_turn(cli.launcher, scrape, project, run_env, api)[0]
        commit = gemini_harness.interactive_turn(cli.launcher, "commit my changes", project, run_env, api)[0]
        api.clear()
        gemini_driver.run(cli.launcher, scrape, project, run_env)  # trusts the folder, as the user's answer would
        trusted = api.model_requests()[0]
    assert "git-commit" in gemini_driver.listing(untrusted)
    assert "web-scrape" not in gemini_driver.listing(untrusted)
    assert "web-scrape" not in (gemini_driver.context(untrusted) or "")
    assert "activate the skill `git-commit`" in (gemini_driver.context(commit) or ""), "no hook ran"
    assert json.loads(rules.read_text(encoding="utf-8")) == {str(project): "TRUST_FOLDER"}
    assert "web-scrape" in gemini_driver.listing(trusted)
    context = gemini_driver.context(trusted)
    assert context is not None and "`web-scrape`" in context, context


def test_eval_host_reports_what_the_model_request_carried_without_and_with_skillpilot(tmp_path: Path) -> None:
    launcher, env = host_cli("codex")
    skills = tmp_path / "skills"
    for name in USER_SKILLS:
        shutil.copytree(SKILLS / name, skills / name)
    queries = tmp_path / "queries.jsonl"
    lines = [
        {"query": "commit my changes", "expected": ["git-commit"]},
        {"query": "what is the capital of France?", "expected": []},
    ]
    queries.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    command = [sys.executable, "-m", "skillpilot", "eval", "host", "codex", "--skills", str(skills)]
    command += ["--queries", str(queries), "--cli", str(launcher), "--json"]
    run_env = {**os.environ, "PATH": f"{launcher.parent}:{env['PATH']}", "PYTHONPATH": str(SRC)}
    proc = subprocess.run(command, env=run_env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    rows = {(r["query"], r["skillpilot"]): r for r in report["rows"]}
    without, with_skillpilot = rows[("commit my changes", False)], rows[("commit my changes", True)]
    assert (without["listed"], without["named"], without["context_chars"]) == (True, False, 0)
    assert (with_skillpilot["named"], with_skillpilot["context_named"]) == (True, "git-commit")
    assert with_skillpilot["context_chars"] > 0 and with_skillpilot["listing_chars"] == without["listing_chars"]
    assert rows[("what is the capital of France?", True)]["context_named"] is None
    assert report["summary"]["with"]["named_by_skillpilot"] == 1
    assert report["summary"]["with"]["out_of_scope_quiet"] == 1
