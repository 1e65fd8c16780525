-- Transcript Lens DuckDB schema. Documented column by column in docs/schema.md;
-- tests/loaders/golden/schema.txt pins it. Bump SCHEMA_VERSION in loaders/schema.py
-- on any change.

CREATE TABLE IF NOT EXISTS meta (
    key VARCHAR PRIMARY KEY,
    value VARCHAR
);

CREATE TABLE IF NOT EXISTS loads (
    load_id INTEGER PRIMARY KEY,
    source VARCHAR NOT NULL,
    source_kind VARCHAR NOT NULL,
    mode VARCHAR NOT NULL,
    started_at TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ,
    status VARCHAR NOT NULL,
    threads INTEGER,
    checkpoints INTEGER,
    messages INTEGER,
    errors INTEGER,
    thread_key_pattern VARCHAR,
    tool_version VARCHAR,
    options JSON
);

CREATE TABLE IF NOT EXISTS load_errors (
    load_id INTEGER NOT NULL,
    thread_id VARCHAR,
    checkpoint_ns VARCHAR,
    checkpoint_id VARCHAR,
    stage VARCHAR NOT NULL,
    reason VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS threads (
    thread_id VARCHAR PRIMARY KEY,
    tenant_id VARCHAR,
    sub_tenant_id VARCHAR,
    session_id VARCHAR,
    first_ts TIMESTAMPTZ,
    last_ts TIMESTAMPTZ,
    checkpoint_count INTEGER NOT NULL,
    root_checkpoint_count INTEGER NOT NULL,
    subgraph_checkpoint_count INTEGER NOT NULL,
    namespace_count INTEGER NOT NULL,
    message_count INTEGER NOT NULL,
    latest_checkpoint_id VARCHAR,
    latest_is_leaf BOOLEAN,
    branch_count INTEGER NOT NULL,
    fork_count INTEGER NOT NULL,
    interrupt_pending BOOLEAN NOT NULL,
    interrupt_value JSON,
    removed_message_count INTEGER NOT NULL,
    edited_message_count INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS checkpoints (
    thread_id VARCHAR NOT NULL,
    checkpoint_ns VARCHAR NOT NULL,
    checkpoint_id VARCHAR NOT NULL,
    parent_checkpoint_id VARCHAR,
    ts TIMESTAMPTZ,
    step INTEGER,
    source VARCHAR,
    run_id VARCHAR,
    message_count INTEGER,
    message_versions INTEGER[],
    is_root BOOLEAN NOT NULL,
    is_latest BOOLEAN NOT NULL,
    is_leaf BOOLEAN NOT NULL,
    on_current_branch BOOLEAN NOT NULL,
    branch_root_id VARCHAR,
    has_interrupt BOOLEAN NOT NULL,
    metadata JSON
);

CREATE TABLE IF NOT EXISTS message_versions (
    thread_id VARCHAR NOT NULL,
    version INTEGER NOT NULL,
    message_id VARCHAR,
    lc_type VARCHAR,
    role VARCHAR NOT NULL,
    name VARCHAR,
    content VARCHAR,
    content_chars INTEGER,
    non_text_blocks INTEGER,
    tool_calls JSON,
    tool_call_count INTEGER,
    tool_call_id VARCHAR,
    tool_status VARCHAR,
    first_checkpoint_id VARCHAR,
    first_ts TIMESTAMPTZ
);

CREATE TABLE IF NOT EXISTS messages (
    thread_id VARCHAR NOT NULL,
    tenant_id VARCHAR,
    sub_tenant_id VARCHAR,
    session_id VARCHAR,
    ordinal INTEGER NOT NULL,
    role VARCHAR NOT NULL,
    lc_type VARCHAR,
    chat_role VARCHAR,
    name VARCHAR,
    content VARCHAR,
    content_chars INTEGER,
    non_text_blocks INTEGER,
    message_id VARCHAR,
    ts TIMESTAMPTZ,
    checkpoint_id VARCHAR,
    tool_calls JSON,
    tool_call_count INTEGER,
    tool_call_id VARCHAR,
    tool_status VARCHAR,
    input_tokens BIGINT,
    output_tokens BIGINT,
    total_tokens BIGINT,
    model VARCHAR,
    usage_metadata JSON,
    response_metadata JSON,
    additional_kwargs JSON,
    version INTEGER
);

CREATE TABLE IF NOT EXISTS message_events (
    thread_id VARCHAR NOT NULL,
    checkpoint_id VARCHAR NOT NULL,
    parent_checkpoint_id VARCHAR,
    ts TIMESTAMPTZ,
    event VARCHAR NOT NULL,
    message_id VARCHAR,
    position INTEGER,
    version INTEGER,
    previous_version INTEGER
);
