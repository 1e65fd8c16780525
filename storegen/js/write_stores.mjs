// Writes LangGraph.js checkpoint stores through the real JS savers, and dumps what those savers
// read back (getTuple / list) as the expected data of the loader's tests.
//
//   node write_stores.mjs --sqlite OUT.sqlite [--postgres DSN] --dump OUT.json
//
// Every thread below runs once per saver. The chat model is scripted (ScriptedChatModel); the
// graphs, reducers, ToolNode, interrupts and savers are LangGraph.js's own. The dump holds, per
// saver, every checkpoint of every thread and namespace as the saver returns it.
import fs from "node:fs";

import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import {
  AIMessage, ChatMessage, HumanMessage, RemoveMessage, SystemMessage,
} from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import {
  Annotation, Command, END, MessagesAnnotation, REMOVE_ALL_MESSAGES, START, Send, StateGraph, interrupt,
} from "@langchain/langgraph";
import { ToolNode, createReactAgent, toolsCondition } from "@langchain/langgraph/prebuilt";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { z } from "zod";

// --- a scripted chat model ----------------------------------------------------------------------

/** Replies with the next scripted AIMessage fields; `bindTools` keeps the script. */
class ScriptedChatModel extends BaseChatModel {
  constructor(script) {
    super({});
    this.script = script;
    this.turn = 0;
  }

  _llmType() {
    return "scripted";
  }

  bindTools() {
    return this;
  }

  async _generate() {
    const fields = this.script[this.turn % this.script.length];
    this.turn += 1;
    const message = new AIMessage({
      ...fields,
      response_metadata: { model_name: "scripted-js-1" },
      usage_metadata: { input_tokens: 10 * this.turn, output_tokens: 3, total_tokens: 10 * this.turn + 3 },
    });
    return { generations: [{ text: typeof fields.content === "string" ? fields.content : "", message }] };
  }
}

const call = (id, name, args) => ({ id, name, args, type: "tool_call" });

// --- tools --------------------------------------------------------------------------------------

const getWeather = tool(async ({ city }) => `Sunny, 21 C in ${city}`, {
  name: "get_weather",
  description: "Weather for a city",
  schema: z.object({ city: z.string() }),
});
// Content and an artifact whose optional field is undefined (written as the undefined marker).
const lookupOrder = tool(async ({ order }) => [`Order ${order} shipped`, { order, status: "shipped", eta: undefined }], {
  name: "lookup_order",
  description: "Order status",
  schema: z.object({ order: z.string() }),
  responseFormat: "content_and_artifact",
});
const refund = tool(async () => {
  throw new Error("refund service unavailable");
}, {
  name: "refund",
  description: "Refund an order",
  schema: z.object({ order: z.string() }),
});

// --- graphs -------------------------------------------------------------------------------------

function chatGraph(model, saver) {
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addEdge(START, "agent")
    .addEdge("agent", END)
    .compile({ checkpointer: saver });
}

function toolLoopGraph(model, saver) {
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode("tools", new ToolNode([lookupOrder, refund]))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer: saver });
}

function approvalGraph(model, saver) {
  return new StateGraph(MessagesAnnotation)
    .addNode("draft", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode("approve", async () => {
      const answer = interrupt({ question: "Send this reply?" });
      return { messages: [new HumanMessage({ content: `Reviewer: ${answer}`, name: "reviewer" })] };
    })
    .addEdge(START, "draft")
    .addEdge("draft", "approve")
    .addEdge("approve", END)
    .compile({ checkpointer: saver });
}

function subgraphGraph(model, saver) {
  const inner = new StateGraph(MessagesAnnotation)
    .addNode("research", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addEdge(START, "research")
    .addEdge("research", END)
    .compile();
  return new StateGraph(MessagesAnnotation)
    .addNode("researcher", inner)
    .addNode("writer", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addEdge(START, "researcher")
    .addEdge("researcher", "writer")
    .addEdge("writer", END)
    .compile({ checkpointer: saver });
}

function removeGraph(saver) {
  return new StateGraph(MessagesAnnotation)
    .addNode("trim", async (state) => {
      const mode = state.messages.at(-1).content;
      if (mode === "clear") {
        return { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), new AIMessage("History cleared.")] };
      }
      return { messages: [new RemoveMessage({ id: state.messages[0].id }), new AIMessage("Dropped the first message.")] };
    })
    .addEdge(START, "trim")
    .addEdge("trim", END)
    .compile({ checkpointer: saver });
}

const FanOut = Annotation.Root({
  ...MessagesAnnotation.spec,
  topics: Annotation({ reducer: (_, b) => b, default: () => [] }),
});

function sendGraph(saver) {
  return new StateGraph(FanOut)
    .addNode("plan", async () => ({ topics: ["billing", "shipping", "returns"] }))
    .addNode("worker", async (arg) => ({
      messages: [new AIMessage({ content: `Notes on ${arg.topic}`, id: `note-${arg.topic}`, name: "worker" })],
    }))
    .addEdge(START, "plan")
    .addConditionalEdges("plan", (state) => state.topics.map((topic) => new Send("worker", { topic })), ["worker"])
    .addEdge("worker", END)
    .compile({ checkpointer: saver });
}

// Two levels of subgraphs: the inner one's checkpoints are in `outer:<task>|inner:<task>`.
function nestedGraph(saver) {
  const inner = new StateGraph(MessagesAnnotation)
    .addNode("deep", async (state) => ({ messages: [new AIMessage(`Deep step saw ${state.messages.length} messages.`)] }))
    .addEdge(START, "deep")
    .addEdge("deep", END)
    .compile();
  const middle = new StateGraph(MessagesAnnotation)
    .addNode("plan", async () => ({ messages: [new AIMessage("Middle step planned.")] }))
    .addNode("inner", inner)
    .addEdge(START, "plan")
    .addEdge("plan", "inner")
    .addEdge("inner", END)
    .compile();
  return new StateGraph(MessagesAnnotation)
    .addNode("middle", middle)
    .addNode("answer", async (state) => ({ messages: [new AIMessage(`Answer after ${state.messages.length} messages.`)] }))
    .addEdge(START, "middle")
    .addEdge("middle", "answer")
    .addEdge("answer", END)
    .compile({ checkpointer: saver });
}

// Two nodes interrupting in the same step, resumed together by interrupt id.
function parallelApprovalGraph(saver) {
  const ask = (who) => async () => {
    const answer = interrupt({ question: `${who}: go ahead?` });
    return { messages: [new HumanMessage({ content: `${who} says ${answer}`, name: who })] };
  };
  return new StateGraph(MessagesAnnotation)
    .addNode("legal", ask("legal"))
    .addNode("finance", ask("finance"))
    .addNode("decide", async (state) => ({ messages: [new AIMessage(`Decided on ${state.messages.length} messages.`)] }))
    .addEdge(START, "legal")
    .addEdge(START, "finance")
    .addEdge(["legal", "finance"], "decide")
    .addEdge("decide", END)
    .compile({ checkpointer: saver });
}

// --- the threads --------------------------------------------------------------------------------

const cfg = (thread) => ({ configurable: { thread_id: thread } });

async function writeThreads(saver) {
  // A plain chat agent, two turns, with a system prompt and a ChatMessage (type "generic").
  const chat = chatGraph(new ScriptedChatModel([
    { content: "Hello! How can I help?" },
    { content: "Your password reset link is on its way." },
  ]), saver);
  await chat.invoke({ messages: [new SystemMessage("You are a support agent."), new HumanMessage("Hi there")] }, cfg("acme:web:chat"));
  await chat.invoke({ messages: [new ChatMessage({ content: "Customer is on the gold plan", role: "crm" }), new HumanMessage("Reset my password")] }, cfg("acme:web:chat"));

  // createReactAgent with tools: every AI message carries `name: undefined`.
  const react = createReactAgent({
    llm: new ScriptedChatModel([
      { content: "", tool_calls: [call("call_w1", "get_weather", { city: "Paris" })] },
      { content: "It is sunny in Paris." },
      { content: "", tool_calls: [call("call_w2", "get_weather", { city: "Oslo" })] },
      { content: "Oslo is sunny too." },
    ]),
    tools: [getWeather],
    checkpointSaver: saver,
  });
  await react.invoke({ messages: [new HumanMessage("Weather in Paris?")] }, cfg("acme:app:react"));
  await react.invoke({ messages: [new HumanMessage("And Oslo?")] }, cfg("acme:app:react"));

  // A hand-built ToolNode loop: two parallel calls, one of which fails (a ToolMessage with status "error").
  const loop = toolLoopGraph(new ScriptedChatModel([
    { content: "Checking both.", tool_calls: [call("call_o1", "lookup_order", { order: "A-1" }), call("call_r1", "refund", { order: "A-1" })] },
    { content: "Your order shipped; the refund could not be made." },
  ]), saver);
  await loop.invoke({ messages: [new HumanMessage("Where is A-1, and refund it")] }, cfg("globex::tools"));

  // interrupt(): one thread resumed, one left pending.
  const approval = () => approvalGraph(new ScriptedChatModel([{ content: "Draft: we will refund you." }]), saver);
  await approval().invoke({ messages: [new HumanMessage("I want a refund")] }, cfg("acme:web:hitl-done"));
  await approval().invoke(new Command({ resume: "approved" }), cfg("acme:web:hitl-done"));
  await approval().invoke({ messages: [new HumanMessage("Cancel my plan")] }, cfg("acme:web:hitl-pending"));

  // A fork: updateState on an earlier checkpoint (a new branch), then a turn on that branch.
  const forked = chatGraph(new ScriptedChatModel([{ content: "First answer." }, { content: "Second answer." }, { content: "Answer on the fork." }]), saver);
  await forked.invoke({ messages: [new HumanMessage("Question one")] }, cfg("acme:web:fork"));
  await forked.invoke({ messages: [new HumanMessage("Question two")] }, cfg("acme:web:fork"));
  const history = [];
  for await (const snap of forked.getStateHistory(cfg("acme:web:fork"))) history.push(snap);
  const afterFirst = history.find((s) => s.values.messages?.length === 2 && s.next.length === 0);
  const forkConfig = await forked.updateState(afterFirst.config, { messages: [new HumanMessage({ content: "Question one, reworded", id: "fork-human" })] });
  await forked.invoke({ messages: [new HumanMessage("A follow-up on the fork")] }, forkConfig);

  // A subgraph: its checkpoints are in their own namespace.
  await subgraphGraph(new ScriptedChatModel([{ content: "Research: three sources." }, { content: "Summary written." }]), saver)
    .invoke({ messages: [new HumanMessage("Research LangGraph.js")] }, cfg("initech:lab:subgraph"));

  // List (multi-part) content, in and out.
  await chatGraph(new ScriptedChatModel([{ content: [{ type: "text", text: "I see a cat." }, { type: "text", text: "It is orange." }] }]), saver)
    .invoke({
      messages: [new HumanMessage({
        content: [{ type: "text", text: "What is in this picture?" }, { type: "image_url", image_url: { url: "https://example.com/cat.png" } }],
        name: "alice",
      })],
    }, cfg("acme:web:multipart"));

  // RemoveMessage of one message, then REMOVE_ALL_MESSAGES.
  const trim = removeGraph(saver);
  await trim.invoke({ messages: [new HumanMessage("first"), new HumanMessage("drop one")] }, cfg("acme:web:remove"));
  await trim.invoke({ messages: [new HumanMessage("clear")] }, cfg("acme:web:remove"));

  // Send: three workers fanned out from one step.
  await sendGraph(saver).invoke({ messages: [new HumanMessage("Brief me on three topics")] }, cfg("globex::send"));

  // Subgraphs two deep, then edits by updateState: a middle message removed, and messages
  // without ids (the reducer gives them ids) written as the `answer` node.
  const nested = nestedGraph(saver);
  await nested.invoke({ messages: [new HumanMessage("Plan my trip")] }, cfg("initech:lab:nested"));
  const state = await nested.getState(cfg("initech:lab:nested"));
  await nested.updateState(cfg("initech:lab:nested"), { messages: [new RemoveMessage({ id: state.values.messages[1].id })] });
  await nested.updateState(cfg("initech:lab:nested"), { messages: [new HumanMessage("And the hotel?"), new AIMessage("Booked.")] }, "answer");

  // Two interrupts in one step, both answered by one Command({resume: {id: value}}).
  const parallel = parallelApprovalGraph(saver);
  const asked = await parallel.invoke({ messages: [new HumanMessage("Approve the contract")] }, cfg("globex::parallel-hitl"));
  const answers = Object.fromEntries(asked.__interrupt__.map((i, k) => [i.id, k ? "yes" : "ok"]));
  await parallel.invoke(new Command({ resume: answers }), cfg("globex::parallel-hitl"));
}

// --- the dump: what the saver itself reads back -------------------------------------------------

function messageFields(m) {
  if (m === null || typeof m !== "object" || typeof m._getType !== "function") return { raw: m };
  return {
    class: m.constructor.name,
    lc_id: m.lc_id,
    type: m.type ?? m._getType(),
    id: m.id ?? null,
    name: m.name ?? null,
    content: m.content,
    role: m.role ?? null,
    tool_calls: m.tool_calls ?? null,
    tool_call_id: m.tool_call_id ?? null,
    status: m.status ?? null,
  };
}

async function dumpSaver(saver) {
  const out = [];
  for await (const tup of saver.list({})) {
    const conf = tup.config.configurable;
    // list() leaves the pending writes out on some savers: getTuple has them all.
    const full = await saver.getTuple({ configurable: { thread_id: conf.thread_id, checkpoint_ns: conf.checkpoint_ns ?? "", checkpoint_id: conf.checkpoint_id } });
    const messages = full.checkpoint.channel_values?.messages;
    out.push({
      thread_id: conf.thread_id,
      checkpoint_ns: conf.checkpoint_ns ?? "",
      checkpoint_id: conf.checkpoint_id,
      parent_checkpoint_id: full.parentConfig?.configurable?.checkpoint_id ?? null,
      ts: full.checkpoint.ts,
      metadata: full.metadata,
      channel_versions: full.checkpoint.channel_versions,
      messages: Array.isArray(messages) ? messages.map(messageFields) : null,
      pending_writes: (full.pendingWrites ?? []).map(([task, channel]) => [task, channel]),
    });
  }
  out.sort((a, b) => (a.thread_id + "\0" + a.checkpoint_ns + "\0" + a.checkpoint_id).localeCompare(b.thread_id + "\0" + b.checkpoint_ns + "\0" + b.checkpoint_id));
  return out;
}

// --- main ---------------------------------------------------------------------------------------

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!["--sqlite", "--postgres", "--dump"].includes(argv[i]) || argv[i + 1] === undefined) {
      throw new Error(`usage: node write_stores.mjs [--sqlite FILE] [--postgres DSN] --dump FILE (got ${argv[i]})`);
    }
    args[argv[i].slice(2)] = argv[i + 1];
  }
  if (!args.dump || !(args.sqlite || args.postgres)) throw new Error("need --dump and at least one of --sqlite, --postgres");
  return args;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const dump = {};
  if (args.sqlite) {
    const saver = SqliteSaver.fromConnString(args.sqlite);
    await writeThreads(saver);
    dump.sqlite = await dumpSaver(saver);
    saver.db.close();
  }
  if (args.postgres) {
    const saver = PostgresSaver.fromConnString(args.postgres);
    await saver.setup();
    await writeThreads(saver);
    dump.postgres = await dumpSaver(saver);
    await saver.end();
  }
  fs.writeFileSync(args.dump, JSON.stringify(dump, null, 1));
}

await main();
