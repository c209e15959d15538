// The plugin as OpenClaw runs it: loaded by OpenClaw's own plugin loader, its hooks fired by
// OpenClaw's hook runner, its command matched and executed by OpenClaw's command registry.
//
// Needs: Node >= 24.16, openclaw 2026.9.x (OPENCLAW_DIR, else `npm install` here), and SKILLPILOT_HOME naming a home
// whose serve.json points at a running `skillpilot serve` over the repository's example skills
// with platforms.openclaw.showRoutingInfo on (tests/test_surfaces_openclaw.py sets all this up).

import assert from "node:assert/strict";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { before, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

const pluginDir = fileURLToPath(new URL("..", import.meta.url));
const openclaw = process.env.OPENCLAW_DIR ?? join(pluginDir, "node_modules", "openclaw");
// Internal entry points (not in openclaw's package exports): the loader and hook runner the
// Gateway itself uses, so the plugin is exercised exactly as a user's OpenClaw would run it.
const load = (path) => import(pathToFileURL(join(openclaw, "dist", path)).href);
const { loadOpenClawPlugins } = await load("plugins/loader.js");
const { getGlobalHookRunner } = await load("plugins/hook-runner-global.js");
const { matchPluginCommand, executePluginCommand } = await load("plugins/build-smoke-entry.js");

function loadPlugin(home) {
  const config = {
    plugins: {
      load: { paths: [pluginDir] },
      allow: ["skillpilot"],
      entries: {
        skillpilot: { enabled: true, hooks: { allowConversationAccess: true }, config: { home } },
      },
    },
  };
  const registry = loadOpenClawPlugins({
    config,
    workspaceDir: pluginDir,
    onlyPluginIds: ["skillpilot"],
    cache: false,
    throwOnLoadError: true,
  });
  const plugin = registry.plugins.find((p) => p.id === "skillpilot");
  assert.equal(plugin?.status, "loaded", JSON.stringify(registry.diagnostics));
  return config;
}

async function command(config, body) {
  const match = matchPluginCommand(body);
  assert.ok(match, `no plugin command matches ${body}`);
  const result = await executePluginCommand({
    ...match,
    commandBody: body,
    senderId: "owner",
    channel: "webchat",
    isAuthorizedSender: true,
    config,
  });
  return result.text;
}

const turn = (message) => ({
  prompt: `earlier turns...\n${message}`,
  messages: [],
  currentUserMessage: message,
});

let config;
before(() => {
  assert.ok(process.env.SKILLPILOT_HOME, "set SKILLPILOT_HOME to the running service's home");
  config = loadPlugin(process.env.SKILLPILOT_HOME);
});

test("a hard route prepends the skill to use, and the reply gets the routing footer", async () => {
  const runner = getGlobalHookRunner();
  const built = await runner.runBeforePromptBuild(turn("commit my changes"), { sessionKey: "s1", agentId: "main" });
  assert.match(built.prependContext, /^SkillPilot routed this prompt to the skill `git-commit` \(confidence 0\.95\)\.\n/);
  assert.match(built.prependContext, /Before anything else, read \S+\/git-commit\/SKILL\.md and follow its instructions\./);
  const sent = await runner.runMessageSending({ content: "Committed." }, { sessionKey: "s1", channelId: "webchat" });
  assert.match(sent.content, /^Committed\.\n\n_via git-commit · \d+ms_$/);
  // The footer belongs to that one reply.
  assert.equal(await runner.runMessageSending({ content: "Anything else?" }, { sessionKey: "s1", channelId: "webchat" }), undefined);
});

test("a pass-through adds nothing", async () => {
  const runner = getGlobalHookRunner();
  const built = await runner.runBeforePromptBuild(turn("Tell me a joke about penguins"), { sessionKey: "s2" });
  assert.equal(built?.prependContext, undefined);
});

test("/skillpilot status, explain and conflicts answer from the service", async () => {
  assert.match(await command(config, "/skillpilot"), /^SkillPilot: 16 skills indexed \(1 conflict groups/);
  const explained = await command(config, "/skillpilot explain commit my changes");
  assert.match(explained, /^Query: "commit my changes"\nfast path/);
  assert.match(explained, /Final: hard git-commit \(confidence 0\.95, fast\)$/);
  assert.match(await command(config, "/skillpilot conflicts"), /image-optimize · image-resize/);
});

test("without a running service the turn goes on unchanged", async () => {
  const nowhere = await mkdtemp(join(tmpdir(), "skillpilot-no-service-"));
  const offline = loadPlugin(nowhere);
  const built = await getGlobalHookRunner().runBeforePromptBuild(turn("commit my changes"), { sessionKey: "s3" });
  assert.equal(built?.prependContext, undefined);
  assert.equal(await command(offline, "/skillpilot"), "SkillPilot's service is not running: start it with `skillpilot serve`.");
});

