/**
 * What the two Claude Code elicitation tests share: docs/tools.md's `deploy` tool as the model calls
 * it, the question it asks as it must reach the client, the answers it gives, and readers for
 * the messages of wrap's log. elicitation.test.ts runs `claude -p`, which cannot show a form;
 * elicitation-pty.test.ts runs Claude Code in a terminal, where a user ticks the box.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { root } from "../helpers.ts";
import { isObject, logText, requestOf, responseTo, type LogEvent } from "./claude.ts";
import type { ToolScript } from "./messages-api.ts";

/** A JSON object, as read from the log. */
export type JSONObject = { [key: string]: unknown };

/** The name Claude Code gives the server in its config, and so in the tool's name. */
export const SERVER_NAME = "json-rpc-study";

/** The call the model makes: deploy to production. */
export const DEPLOY: ToolScript = {
  tool: `mcp__${SERVER_NAME}__deploy`,
  input: { environment: "production" },
  toolUseId: "toolu_01JsonRpcStudyDeployProd",
};

/** server.ts with docs/tools.md's deploy tool, built in memory; `--legacy` takes server/discover out. */
export const deployServer = join(root, "tests", "claude-code", "deploy-server.mjs");

/** The question docs/tools.md's deploy handler asks for production: an elicitation/create's params. */
export const QUESTION = {
  message: "Deploy to production?",
  requestedSchema: {
    type: "object",
    properties: { confirm: { type: "boolean", description: "Yes, deploy to production" } },
    required: ["confirm"],
  },
} as const;

/** What the tool answers when the question was closed unanswered (action "cancel"). */
export const CANCELLED = "Not deployed: the user closed the question unanswered";

/** What the tool answers when the user ticked the box and accepted. */
export const DEPLOYED = "Deployed to production (a dry run: nothing was changed)";

/** The messages with `method` that went in direction `mark` (→ to the server, ← from it). */
export function withMethod(events: readonly LogEvent[], mark: string, method: string): JSONObject[] {
  return events.flatMap((event) => {
    const request = event.mark === mark ? requestOf(event) : undefined;
    return request?.method === method ? [request] : [];
  });
}

/** The methods Claude Code sent, in order. */
export function methodsSent(events: readonly LogEvent[]): unknown[] {
  return events.flatMap((event) => {
    const request = event.mark === "→" ? requestOf(event) : undefined;
    return request === undefined ? [] : [request.method];
  });
}

/** The params of a message, which every message checked here must have. */
export function paramsOf(message: JSONObject): JSONObject {
  assert.ok(isObject(message.params), `no params: ${JSON.stringify(message)}`);
  return message.params;
}

/** The result of the response, in direction `mark`, to the request with `id`; fails without. */
export function resultFor(events: readonly LogEvent[], id: unknown, mark: string): JSONObject {
  const message = responseTo(events, id, mark)?.message;
  assert.ok(isObject(message) && isObject(message.result), `no result for ${String(id)}:\n${logText(events)}`);
  return message.result;
}
