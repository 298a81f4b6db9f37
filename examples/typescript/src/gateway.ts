/**
 * A TypeScript agent gateway on skill-router's JSON door (`serve --http-port`), with the official
 * Connect client for Node and the code protoc-gen-es generates from protos/router/v1/router.proto.
 *
 * One session of three user turns, kept cache-friendly:
 *   - every turn is routed; `stableText` goes into the system prompt once and must come back
 *     byte for byte on every later turn (so the model API's prompt cache holds), and
 *     `revealText` (the skills new to the conversation) goes right after the user's message;
 *   - on the first turn the (scripted) model picks a retrieved skill and the gateway activates
 *     it, passing `routeId` back; its `<skill_content>` joins the conversation.
 *
 * Usage: node dist/gateway.js [URL]   (default http://127.0.0.1:8080; SKILL_ROUTER_TOKEN: a
 * bearer token, when the server asks for one). The last line printed is a JSON summary.
 * Exit status: 0 on success, 1 when a call fails or the cache would not hold.
 */

import { randomUUID } from "node:crypto";

import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";

import { RouteReason, SkillRouter, type RouteResponse } from "./gen/router/v1/router_pb.js";

type Role = "system" | "user" | "assistant" | "tool";
type Message = { role: Role; content: string };

const SYSTEM_PROMPT = "You are a helpful agent.";
const TURNS = [
  "Please extract the tables from this PDF report.",
  "Now merge it with last year's report into one PDF.",
  "Thanks! Draft a short status update about it for the team.",
];

/** Sends the token of SKILL_ROUTER_TOKEN, when set, as the server's callers do. */
const bearer: Interceptor = (next) => async (request) => {
  const token = process.env.SKILL_ROUTER_TOKEN;
  if (token) request.header.set("Authorization", `Bearer ${token}`);
  return next(request);
};

/** A stand-in for the LLM: the first retrieved skill, else the first routed one. */
function scriptedModel(route: RouteResponse): string {
  const retrieved = route.skills.filter((s) => s.reason === RouteReason.RETRIEVED);
  const picked = (retrieved.length > 0 ? retrieved : route.skills)[0];
  if (picked === undefined) throw new Error("no skill was routed; nothing to activate");
  return picked.name;
}

async function main(): Promise<void> {
  const baseUrl = process.argv[2] ?? "http://127.0.0.1:8080";
  const transport = createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors: [bearer] });
  const router = createClient(SkillRouter, transport);
  const sessionId = `ts-gateway-${randomUUID()}`;
  const conversation: Message[] = [];
  const revealed: string[][] = [];
  let activated = "";
  for (const [turn, text] of TURNS.entries()) {
    const history = conversation.filter((m) => m.role === "user").map((m) => m.content);
    const route = await router.route({ message: text, sessionId, history });
    const system = `${SYSTEM_PROMPT}\n\n${route.stableText}`;
    if (turn === 0) {
      conversation.push({ role: "system", content: system });
    } else if (conversation[0]?.content !== system) {
      throw new Error(`turn ${turn + 1}: stableText changed, the prompt cache would miss`);
    }
    conversation.push({ role: "user", content: text });
    if (route.revealText) conversation.push({ role: "user", content: route.revealText });
    revealed.push(route.skills.filter((s) => s.firstShown).map((s) => s.name));
    console.log(`turn ${turn + 1}: routed ${route.skills.map((s) => s.name).join(", ")}; ` +
                `revealed ${revealed[turn].join(", ") || "nothing new"}`);
    if (turn === 0) {
      const name = scriptedModel(route);
      const activation = await router.activate({ name, sessionId, routeId: route.routeId });
      if (!activation.content.startsWith("<skill_content")) {
        throw new Error(`activating ${name} returned no <skill_content>`);
      }
      conversation.push({ role: "tool", content: activation.content });
      activated = name;
      console.log(`   the model activates ${name}: ${activation.content.length} characters, ` +
                  `${activation.resources.length} bundled file(s)`);
    }
    conversation.push({ role: "assistant", content: `(the model answers turn ${turn + 1})` });
  }
  console.log(JSON.stringify({ turns: TURNS.length, sessionId, activated, revealed,
                               stablePrompt: true, messages: conversation.length }));
}

main().catch((error: unknown) => {
  const why = error instanceof ConnectError ? `${Code[error.code]}: ${error.rawMessage}`
    : String(error);
  console.error(`gateway failed: ${why}`);
  process.exit(1);
});
