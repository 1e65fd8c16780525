"""storegen: write real LangGraph checkpoint stores (real graphs, real savers, fake models).

Shipped with the package as the conformance kit's graph writer (`loaders.conformance.write_graphs`;
its requirements: `pip install 'transcript-lens[conformance]'`); the tests, the demo and the bench use it too.
LangGraph.js stores are written by Node: storegen/js/write_stores.mjs (its packages pinned by
storegen/js/package-lock.json; `make test` runs `npm ci` there).

Example:
    >>> import tempfile, os
    >>> from storegen import build_sqlite_store
    >>> manifest = build_sqlite_store(os.path.join(tempfile.mkdtemp(), "t.sqlite"), scenarios=["edit"])
    >>> manifest
    {'globex::s2': 'edit'}
"""

from storegen.bench import build_bench_store
from storegen.build import build_sqlite_store, open_sqlite_saver, remove_store, run_scenarios, select_threads
from storegen.clock import DEFAULT_START, UTC, Clock, clock_scope, current_clock
from storegen.graphs import (
    LegacyState,
    build_agent_graph,
    build_chat_graph,
    build_delegating_graph,
    build_operator_add_graph,
    build_research_graph,
)
from storegen.ids import IdSource, current_ids, deterministic
from storegen.models import CLAUDE, GPT, Reply, ScriptedChatModel, make_ai_message
from storegen.scenarios import (
    DEFAULT_THREADS,
    SCENARIOS,
    say,
    scenario_edit,
    scenario_interrupt_pending,
    scenario_interrupt_resumed,
    scenario_list_content,
    scenario_operator_add,
    scenario_remove_message,
    scenario_replay_branch,
    scenario_second_process,
    scenario_simple_chat,
    scenario_subgraph,
    scenario_tool_calls,
    scenario_tool_subgraph,
    store_location,
    thread_config,
)
from storegen.tools import ALL_TOOLS, CODING_TOOLS, HELPDESK_TOOLS, SUPPORT_TOOLS

__all__ = [
    "ALL_TOOLS", "CLAUDE", "CODING_TOOLS", "DEFAULT_START", "DEFAULT_THREADS", "GPT", "SCENARIOS",
    "HELPDESK_TOOLS", "SUPPORT_TOOLS", "UTC", "Clock", "IdSource", "LegacyState", "Reply", "ScriptedChatModel",
    "build_agent_graph", "build_bench_store", "build_chat_graph", "build_delegating_graph", "build_operator_add_graph",
    "build_research_graph", "build_sqlite_store", "clock_scope", "current_clock", "current_ids",
    "deterministic", "make_ai_message", "open_sqlite_saver", "remove_store", "run_scenarios", "say",
    "scenario_edit", "scenario_interrupt_pending", "scenario_interrupt_resumed", "scenario_list_content",
    "scenario_operator_add", "scenario_remove_message", "scenario_replay_branch", "scenario_second_process",
    "scenario_simple_chat", "scenario_subgraph", "scenario_tool_calls", "scenario_tool_subgraph", "select_threads", "store_location",
    "thread_config",
]
