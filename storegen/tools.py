"""Deterministic fake tools for the support / coding agents.

Example:
    >>> lookup_order.invoke({"order_id": "A-1043"})["status"]
    'shipped'
"""

from __future__ import annotations

import zlib
from typing import Any

from langchain_core.tools import tool

from storegen.clock import advance_active

_ORDERS: dict[str, dict[str, Any]] = {
    "A-1043": {"status": "shipped", "carrier": "UPS", "tracking": "1Z999AA10123456784", "total": 64.90},
    "A-9989": {"status": "delayed", "carrier": "DHL", "tracking": "JD014600006281230", "total": 42.50},
    "B-2211": {"status": "delivered", "carrier": "USPS", "tracking": "9400111899223344556677", "total": 89.00},
    "C-3307": {"status": "processing", "carrier": None, "tracking": None, "total": 129.00},
    "D-4120": {"status": "shipped", "carrier": "FedEx", "tracking": "771234567890", "total": 249.00},
    "E-5581": {"status": "returned", "carrier": "UPS", "tracking": "1Z999AA10198765432", "total": 35.99},
}


@tool
def lookup_order(order_id: str) -> dict[str, Any]:
    """Look up an order by id (status, carrier, tracking number, total)."""
    advance_active(0.412)
    if order_id not in _ORDERS:
        # ToolNode(handle_tool_errors=True) turns this into a status="error" ToolMessage.
        raise ValueError(f"Order {order_id} not found")
    return {"order_id": order_id, **_ORDERS[order_id]}


@tool
def track_shipment(tracking: str) -> str:
    """Return the latest carrier scan for a tracking number."""
    advance_active(0.655)
    if tracking.startswith("JD"):
        return "DHL: held at Leipzig hub since Mar 1, customs clearance pending (6 days late)."
    return "UPS: in transit, departed Louisville KY; estimated delivery Thursday by 8pm."


@tool
def issue_refund(order_id: str, amount: float, reason: str) -> str:
    """Issue a refund to the original payment method."""
    advance_active(0.803)
    refund_no = zlib.crc32(f"{order_id}:{amount:.2f}".encode()) % 90000 + 10000
    return f"Refund R-{refund_no} of ${amount:.2f} for {order_id} submitted ({reason})."


_DOCS = {
    "stream": "Streaming: graph.stream(inputs, stream_mode='messages') yields (token, metadata) pairs.",
    "checkpoint": "Persistence: compile(checkpointer=SqliteSaver(conn)); pass a thread_id in config.",
    "retry": "Retries: add_node(..., retry_policy=RetryPolicy(max_attempts=3)) retries failed nodes.",
    "rate limit": "Rate limits: the API returns 429 with a Retry-After header; back off exponentially.",
    "webhook": "Webhooks: verify the X-Signature header with HMAC-SHA256 of the raw body.",
    "pagination": "Pagination: list endpoints take cursor= and return next_cursor until null.",
    "timezone": "Dates: the API returns ISO 8601 in UTC; convert with datetime.fromisoformat().",
}


@tool
def search_docs(query: str) -> str:
    """Search the product documentation and return the best matching snippets."""
    advance_active(0.377)
    hits = [text for key, text in _DOCS.items() if key in query.lower()] or [
        "No exact match; closest: " + _DOCS["checkpoint"]
    ]
    return f"[docs] Top results for '{query}':\n" + "\n".join(f"{i}. {h}" for i, h in enumerate(hits, 1))


@tool
def run_tests(path: str) -> str:
    """Run the project's test suite under ``path`` and summarise the result."""
    advance_active(2.318)
    if "integration" in path:
        raise RuntimeError("pytest exited with code 2: fixture 'pg_dsn' not found")
    return f"pytest {path}: 48 passed, 1 failed (test_parse_dates: expected 2025-03-01, got 2025-02-28)"


_SERVICES = {
    "vpn": "degraded: GlobalProtect gateway eu-2 at 100% CPU since 08:40, failover in progress",
    "email": "operational",
    "printing": "operational (floor 3 printer flagged: fuser error)",
    "sso": "operational",
}


@tool
def check_service_status(service: str) -> str:
    """Current status of an internal IT service (vpn, email, printing, sso)."""
    advance_active(0.298)
    key = service.lower().strip()
    if key not in _SERVICES:
        raise KeyError(f"unknown service {service!r}; known: {', '.join(_SERVICES)}")
    return f"{key}: {_SERVICES[key]}"


@tool
def create_ticket(summary: str, priority: str = "P3") -> str:
    """Open a ticket in the IT service desk queue."""
    advance_active(0.521)
    return f"Ticket IT-{zlib.crc32(summary.encode()) % 9000 + 1000} created ({priority}): {summary}"


SUPPORT_TOOLS = [lookup_order, track_shipment, issue_refund]
CODING_TOOLS = [search_docs, run_tests]
HELPDESK_TOOLS = [check_service_status, create_ticket]
ALL_TOOLS = SUPPORT_TOOLS + CODING_TOOLS + HELPDESK_TOOLS
