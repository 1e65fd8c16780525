"""SQLite stores written by older LangGraph releases, each with the ground truth of what happened.

    python scripts/legacy_stores.py [--out tests/loaders/legacy] [--venvs /tmp/transcript-lens-legacy]

For every release in `RELEASES` a throwaway venv is made under `--venvs` (pip from
PyPI; kept between runs, keyed by its pins). Each store in `STORES` is written by
real graphs over a real `SqliteSaver` in one release, or begun in an old release
and continued (same file, same threads, more turns) in a newer one. The graphs use
a fake chat model (`FakeMessagesListChatModel`) with tool calls, messages with and
without ids (an `operator.add` list), a list overwritten without a reducer,
`update_state` edits by id and `RemoveMessage`.

Then the release that wrote the store last reads it back through its own saver and
decoder (`SqliteSaver.list`) and writes `<store>.json`: per thread, every root
checkpoint compared with its parent by DECODED VALUE (messages matched by id, a
message without id by its value, copy by copy; contract §3.7: tests/oracle.py's
`expected_events`), the events, the current-branch edit and removal counts and the
transcript. That file is the oracle of tests/loaders/test_legacy_releases.py: it
comes from the library's own decoder, not from our loader. Stores are committed as
`<store>.sqlite.gz`.

The script runs itself inside each venv (`--write` / `--truth`), so it imports only
the standard library at module level (tests/oracle.py for the ground truth, which the venvs import too).
"""


import argparse
import gzip
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Release → pip pins ([] = the interpreter running this script: the project's own venv).
# lg02 is the last langgraph-checkpoint that wrote every checkpoint as `json` (1.0.9;
# from 1.0.10 on msgpack, json only as a fallback).
RELEASES = {
    "lg02": ["langgraph==0.2.20", "langgraph-checkpoint==1.0.9", "langgraph-checkpoint-sqlite==1.0.3", "langchain-core==0.2.43"],
    "lg03": ["langgraph==0.3.34", "langgraph-checkpoint==2.0.26", "langgraph-checkpoint-sqlite==2.0.6", "langchain-core==0.3.56"],
    "lg06": ["langgraph==0.6.11", "langgraph-checkpoint==2.1.2", "langgraph-checkpoint-sqlite==2.0.11", "langchain-core==0.3.79"],
    "current": [],
}

# Store name → the releases that write it, in turn (the first writes turn 1, the last turn 2).
STORES = {
    "lg02": ["lg02", "lg02"],
    "lg03": ["lg03", "lg03"],
    "lg06": ["lg06", "lg06"],
    "current": ["current", "current"],
    "lg02-then-current": ["lg02", "current"],
    "lg03-then-lg06": ["lg03", "lg06"],
}

THREADS = ("acme:web:agent", "acme:web:plain", "acme:web:overwrite")


# --- orchestration (the project's venv) ----------------------------------------------------

def venv_python(release: str, root: Path) -> str:
    """The interpreter of `release`'s venv, made (or reused when its pins match)."""
    pins = RELEASES[release]
    if not pins:
        return sys.executable
    venv = root / release
    marker = venv / "pins.txt"
    py = venv / "bin" / "python"
    if marker.exists() and marker.read_text() == "\n".join(pins):
        return str(py)
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(py), "-m", "pip", "install", "-q", *pins], check=True)
    marker.write_text("\n".join(pins))
    return str(py)


def versions(py: str) -> dict[str, str]:
    code = (
        "import json, importlib.metadata as m; print(json.dumps({p: m.version(p) for p in "
        "('langgraph', 'langgraph-checkpoint', 'langgraph-checkpoint-sqlite', 'langchain-core')}))"
    )
    return json.loads(subprocess.run([py, "-c", code], check=True, capture_output=True, text=True).stdout)


def build(out: Path, venvs: Path, only: list[str] | None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, writers in STORES.items():
        if only and name not in only:
            continue
        store = out / f"{name}.sqlite"
        for p in (store, store.with_suffix(".json"), store.with_name(store.name + ".gz")):
            p.unlink(missing_ok=True)
        written_by = []
        for turn, release in enumerate(writers, start=1):
            py = venv_python(release, venvs)
            subprocess.run([py, __file__, "--write", str(store), "--turn", str(turn)], check=True)
            written_by.append({"release": release, "turn": turn, **versions(py)})
        # Journal mode back to DELETE, small pages, free pages dropped: one small self-contained file.
        con = sqlite3.connect(store)
        con.execute("PRAGMA journal_mode=DELETE")
        con.execute("PRAGMA page_size=1024")
        con.execute("VACUUM")
        con.close()
        py = venv_python(writers[-1], venvs)
        subprocess.run([py, __file__, "--truth", str(store), "--written-by", json.dumps(written_by)], check=True)
        # Committed gzipped (a tenth of the size); mtime 0: the same store gives the same bytes.
        packed = store.with_name(store.name + ".gz")
        with open(store, "rb") as src, gzip.GzipFile(packed, "wb", compresslevel=9, mtime=0) as dst:
            shutil.copyfileobj(src, dst)
        print(f"{packed}: {packed.stat().st_size} bytes ({store.stat().st_size} unpacked), written by {' then '.join(writers)}")
        store.unlink()


# --- inside a release's venv: the graphs ---------------------------------------------------

def _graphs(conn):
    import operator
    from typing import Annotated, TypedDict

    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.graph.message import add_messages

    saver = SqliteSaver(conn)

    class Chat(TypedDict):
        messages: Annotated[list, add_messages]

    def agent(state):
        msgs = state["messages"]
        last = msgs[-1]
        n = len(msgs)
        if isinstance(last, HumanMessage):
            reply = AIMessage(
                content="",
                tool_calls=[{"name": "add", "args": {"a": n, "b": 2}, "id": f"call_{n}"}],
                response_metadata={"model_name": "fake-model", "finish_reason": "tool_calls"},
                usage_metadata={"input_tokens": 10 + n, "output_tokens": 5, "total_tokens": 15 + n},
            )
        else:
            reply = AIMessage(
                content=f"The sum is {last.content}.",
                response_metadata={"model_name": "fake-model", "finish_reason": "stop"},
                usage_metadata={"input_tokens": 20 + n, "output_tokens": 6, "total_tokens": 26 + n},
            )
        # A model per call: the fake model gives its reply object an id, and a reused
        # reply would come back with that id (an edit, not a new message).
        return {"messages": [FakeMessagesListChatModel(responses=[reply]).invoke(msgs)]}

    def tools(state):
        calls = state["messages"][-1].tool_calls
        return {"messages": [
            ToolMessage(content=str(c["args"]["a"] + c["args"]["b"]), tool_call_id=c["id"], name=c["name"]) for c in calls
        ]}

    g = StateGraph(Chat)
    g.add_node("agent", agent)
    g.add_node("tools", tools)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", lambda s: "tools" if s["messages"][-1].tool_calls else END, ["tools", END])
    g.add_edge("tools", "agent")
    chat = g.compile(checkpointer=saver)

    class Plain(TypedDict):
        messages: Annotated[list, operator.add]  # no add_messages: nothing gets an id

    def plain_node(state):
        n = len(state["messages"])
        if n % 4 == 1:  # a tool call in a message without id, so its fields are in the payload
            return {"messages": [AIMessage(content="", tool_calls=[{"name": "add", "args": {"a": n, "b": 1}, "id": f"p{n}"}])]}
        return {"messages": [AIMessage(content="OK")]}

    g = StateGraph(Plain)
    g.add_node("node", plain_node)
    g.add_edge(START, "node")
    plain = g.compile(checkpointer=saver)

    class Overwritten(TypedDict):
        messages: list  # no reducer: each step's list replaces the last

    g = StateGraph(Overwritten)
    g.add_node("node", lambda s: {"messages": list(s["messages"])})  # 0.2 refuses a node that writes nothing
    g.add_edge(START, "node")
    overwrite = g.compile(checkpointer=saver)
    return chat, plain, overwrite


def write(store: str, turn: int) -> None:
    from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage

    conn = sqlite3.connect(store, check_same_thread=False)
    chat, plain, overwrite = _graphs(conn)
    agent_c, plain_c, over_c = ({"configurable": {"thread_id": t}} for t in THREADS)
    if turn == 1:
        chat.invoke({"messages": [HumanMessage(content="What is 1+2?")]}, agent_c)
        # A real edit: the final answer replaced by id (add_messages replaces in place).
        final = chat.get_state(agent_c).values["messages"][-1]
        chat.update_state(agent_c, {"messages": [AIMessage(content="Three.", id=final.id)]})
        for q in ("q1", "q2"):
            plain.invoke({"messages": [HumanMessage(content=q)]}, plain_c)
        overwrite.invoke({"messages": [HumanMessage(content="q"), AIMessage(content="OK"), AIMessage(content="OK")]}, over_c)
    else:
        # Every earlier message is re-read and re-written by this release.
        chat.invoke({"messages": [HumanMessage(content="And 4+5?")]}, agent_c)
        msgs = chat.get_state(agent_c).values["messages"]
        tool_msg = next(m for m in msgs if m.type == "tool")
        chat.update_state(agent_c, {"messages": [RemoveMessage(id=tool_msg.id)]})
        human = next(m for m in msgs if m.type == "human")
        chat.update_state(agent_c, {"messages": [HumanMessage(content="What is 1+2, please?", id=human.id)]})
        for q in ("q3", "q1"):
            plain.invoke({"messages": [HumanMessage(content=q)]}, plain_c)
        # The list rewritten: the second "OK" (no id) dropped, a new one added.
        overwrite.invoke({"messages": [HumanMessage(content="q"), AIMessage(content="OK"), AIMessage(content="Done")]}, over_c)
    conn.close()


# --- inside the last writer's venv: the ground truth ---------------------------------------

def truth(store: str, written_by: list) -> None:
    """`<store>.json`: tests/oracle.py's events and counts, run on this release's own saver and decoder."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    sys.path.insert(0, str(ROOT))
    from tests.oracle import content_text, expected_events, tuples_by_thread, _latest, _messages, _roots

    conn = sqlite3.connect(store, check_same_thread=False)
    saver = SqliteSaver(conn)  # the release's default serializer: what its graphs read back
    threads = expected_events(saver, list(THREADS))
    for thread_id, tuples in tuples_by_thread(saver).items():
        latest = _messages(_latest(_roots(tuples))) or []
        threads[thread_id]["transcript"] = [[m.type, content_text(m.content), m.id] for m in latest]
    conn.close()
    doc = {"written_by": written_by, "threads": threads}
    text = json.dumps(doc, indent=1, ensure_ascii=False)
    # Lists of scalars (an event, a transcript line) on one line each.
    text = re.sub(r"\[\n\s+([^\[\]{}]*?)\n\s+\]", lambda m: "[" + re.sub(r",\n\s+", ", ", m.group(1)) + "]", text)
    Path(store).with_suffix(".json").write_text(text + "\n")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "tests" / "loaders" / "legacy"))
    ap.add_argument("--venvs", default=os.environ.get("LEGACY_VENVS", "/tmp/transcript-lens-legacy"))
    ap.add_argument("--only", nargs="*", help="store names (default: all)")
    ap.add_argument("--write", help=argparse.SUPPRESS)
    ap.add_argument("--turn", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--truth", help=argparse.SUPPRESS)
    ap.add_argument("--written-by", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.write:
        write(args.write, args.turn)
    elif args.truth:
        truth(args.truth, json.loads(args.written_by))
    else:
        build(Path(args.out), Path(args.venvs), args.only)


if __name__ == "__main__":
    main()
