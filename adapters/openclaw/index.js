// SkillPilot for OpenClaw: route each message to the right skill before the model runs.
//
// Thin by design: the resident service (`skillpilot serve`, address in $SKILLPILOT_HOME/serve.json)
// routes and phrases the shared AdapterAction; this plugin only moves it into OpenClaw.
//   before_prompt_build  hard/soft decision -> prependContext (the skill to use, or to consider)
//   message_sending      optional footers ("via <skill>", conflicts passed over), per session
//   /skillpilot          status | explain <message> | conflicts
// It never blocks a turn: without a reachable service the prompt goes on unchanged.

import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

import { definePluginEntry } from "openclaw/plugin-sdk/plugin-entry";

// The service answers in milliseconds; one that takes longer is stuck, and the turn must go on.
const SERVICE_TIMEOUT_MS = 2000;
// Footers wait between the prompt and the reply; a session that never replies must not pile up.
const MAX_PENDING_FOOTERS = 256;
const NOT_RUNNING = "SkillPilot's service is not running: start it with `skillpilot serve`.";

function skillpilotHome(pluginConfig) {
  return pluginConfig?.home ?? process.env.SKILLPILOT_HOME ?? join(homedir(), ".skillpilot");
}

async function call(pluginConfig, method, path, body) {
  const info = JSON.parse(await readFile(join(skillpilotHome(pluginConfig), "serve.json"), "utf8"));
  const headers = { "content-type": "application/json" };
  if (info.token) headers.authorization = `Bearer ${info.token}`;
  const response = await fetch(`${info.url}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(SERVICE_TIMEOUT_MS),
  });
  const data = await response.json();
  if (!response.ok) throw new Error(data?.error?.message ?? `HTTP ${response.status}`);
  return data;
}

function formatStats(stats) {
  return [
    `SkillPilot: ${stats.skills} skills indexed (${stats.conflict_groups} conflict groups, ` +
      `${stats.low_quality.length} low-quality fingerprints)`,
    `Roots: ${stats.roots.join(", ") || "(none)"}`,
    `Embed provider: ${stats.embed_provider}`,
  ].join("\n");
}

function formatExplain(result) {
  const lines = [`Query: "${result.query}"`];
  for (const stage of result.trace ?? []) {
    lines.push(`${stage.stage}`);
    for (const [id, score] of stage.candidates) lines.push(`  ${id}  ${Number(score).toFixed(3)}`);
    for (const note of stage.notes) lines.push(`  ${note}`);
  }
  const verdict = result.skill
    ? `${result.decision} ${result.skill.id} (confidence ${result.confidence.toFixed(2)}, ${result.method})`
    : "pass-through: no skill matched";
  lines.push(`Final: ${verdict}`);
  return lines.join("\n");
}

function formatConflicts(conflicts) {
  if (conflicts.groups.length === 0) return `No conflict groups (similarity threshold ${conflicts.threshold}).`;
  return conflicts.groups
    .map((g) => `Conflict group ${g.id} (similarity ${g.similarity.toFixed(2)}):\n  ${g.members.join(" · ")}\n  Tip: ${g.tip}`)
    .join("\n");
}

export default definePluginEntry({
  id: "skillpilot",
  name: "SkillPilot",
  description: "Routes each message to the right skill before the model runs.",
  register(api) {
    const footers = new Map();

    api.on("before_prompt_build", async (event, ctx) => {
      // The current request, not the prompt rebuilt with history (OpenClaw's own advice).
      const message = event.currentUserMessage ?? event.prompt;
      if (typeof message !== "string" || !message.trim()) return undefined;
      try {
        const { action, footer } = await call(api.pluginConfig, "POST", "/action", { message });
        if (footer && ctx?.sessionKey) {
          if (footers.size >= MAX_PENDING_FOOTERS) footers.delete(footers.keys().next().value);
          footers.set(ctx.sessionKey, footer);
        }
        return action.type === "passthrough" ? undefined : { prependContext: action.context };
      } catch (error) {
        api.logger.debug?.(`skillpilot: no route (${error.message}); the prompt goes on unchanged`);
        return undefined;
      }
    });

    api.on("message_sending", async (event, ctx) => {
      const footer = ctx?.sessionKey ? footers.get(ctx.sessionKey) : undefined;
      if (!footer || typeof event.content !== "string") return undefined;
      footers.delete(ctx.sessionKey);
      return { content: `${event.content}\n\n${footer}` };
    });

    api.registerCommand({
      name: "skillpilot",
      description: "SkillPilot: status, explain <message>, conflicts",
      acceptsArgs: true,
      handler: async (ctx) => {
        const [sub = "status", ...rest] = (ctx.args ?? "").trim().split(/\s+/).filter(Boolean);
        try {
          if (sub === "explain") {
            if (rest.length === 0) return { text: "Usage: /skillpilot explain <message>" };
            return { text: formatExplain(await call(api.pluginConfig, "POST", "/explain", { message: rest.join(" ") })) };
          }
          if (sub === "conflicts") return { text: formatConflicts(await call(api.pluginConfig, "GET", "/conflicts")) };
          return { text: formatStats(await call(api.pluginConfig, "GET", "/stats")) };
        } catch (error) {
          return { text: error.code === "ENOENT" || error.cause?.code === "ECONNREFUSED" ? NOT_RUNNING : `SkillPilot: ${error.message}` };
        }
      },
    });
  },
});
