#!/usr/bin/env python3
"""A deterministic, rule-based customer-support agent for the ToolGate example.

No model and no dependencies: it reads the user turn (and the history), picks tools
with regular expressions and keywords, and speaks ToolGate's command-adapter protocol
(JSON Lines on stdin/stdout, one long-lived worker):

    runner -> agent  {"type": "start", "case_id", "sample", "seed", "messages", "tools"}
    agent -> runner  {"type": "tool_calls", "case_id", "sample", "calls": [...], ...}
    runner -> agent  {"type": "tool_results", "results": [{"id", "name", "content", "is_error"}]}
    agent -> runner  ... more tool_calls, then {"type": "final", "case_id", "sample", ...}

Every reply echoes the ``case_id`` and ``sample`` of the start message it answers. In a
conversation case the runner sends each next user turn as ``{"type": "user", "case_id",
"sample", "content", "messages"}`` after the agent's ``final``; the agent answers it from
``messages`` (the conversation so far) like a ``start``: a turn that only gives what was
asked for ("It's carla@example.com.") or confirms ("Yes, please cancel it.") carries on
with the request of the turns before it.

It is good on most of the example dataset and wrong on a few cases in the ways real
agents are wrong: an amount with a thousands separator is misread, "broken" is not
recognised as damage, a country name is passed where an ISO code is needed, an order
mentioned in passing is looked up for nothing, and when closing an account a
verification that failed earlier in the conversation is taken as done.

Variants (``--variant NAME`` or ``SUPPORT_AGENT_VARIANT=NAME``):

* ``good`` (default) — as above;
* ``regressed`` — consistently worse: a refund whose request comes with the email in
  the same message is issued before ``verify_identity`` (too late), "close my account"
  permanently deletes it (``delete_account``) — a must-not-call violation —, parallel
  calls go one per assistant turn and a failed call is tried once more (more steps and
  prompts: what it costs shows in the report's Cost group);
* ``flaky`` — like ``good``, but on about one case in eight it fails one sample in
  three, chosen deterministically from the case id and the sample number.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from collections.abc import Generator
from typing import Any

Call = dict[str, Any]
Result = dict[str, Any]
Flow = Generator[list[Call], list[Result], str]
"""A conversation flow: yields a batch of calls, receives their results, returns the
final answer."""

ORDER_RE = re.compile(r"\bord_(\d{5})\b|#(\d{5})\b|\border\s+(\d{5})\b", re.I)
EMAIL_RE = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
# Deliberately naive about thousands separators: "$1,299.00" reads as 1.
AMOUNT_RE = re.compile(r"\$\s?(\d+(?:\.\d{1,2})?)")
COUNTRIES = {
    "us": "US",
    "usa": "US",
    "united states": "US",
    "germany": "DE",
    "france": "FR",
    "canada": "CA",
}
SECTIONS = (  # first match wins: one section per question
    ("returns", ("return", "refund")),
    ("warranty", ("warranty", "guarantee")),
    ("shipping", ("ship", "deliver", "canada", "international")),
    ("account", ("password", "account", "sign up", "log in", "login")),
    ("billing", ("pay", "paypal", "invoice", "billing")),
    ("privacy", ("privacy", "my data")),
)
QUESTION_START = re.compile(r"^(can i|how|what|which|do you|does|is there|are there|if i)\b", re.I)
CONFIRM_RE = re.compile(r"^\s*(yes|yep|yeah|sure|ok|okay|go ahead|please do|do it)\b", re.I)
HESITANT = ("thinking of", "thinking about", "not sure", "might", "maybe")
"""Words of a user who has not decided yet: cancelling or closing waits for a yes."""
REQUEST_WORDS = (
    "refund", "money back", "cancel", "close my account", "closing my account", "deactivate",
    "delete", "erase", "address", "track", "where", "status", "manager", "human", "stolen",
    "fraud", "lawyer", "policy", "email me", "send me", "?",
)  # fmt: skip
"""A user turn with none of these asks nothing of its own: it answers the agent's question."""


# ─── reading the conversation ─────────────────────────────────────────────────


def orders_in(text: str) -> list[str]:
    out: list[str] = []
    for m in ORDER_RE.finditer(text):
        oid = "ord_" + next(g for g in m.groups() if g)
        if oid not in out:
            out.append(oid)
    return out


def parse_content(content: Any) -> Any:
    if isinstance(content, str):
        try:
            return json.loads(content)
        except ValueError:
            return content
    return content


class Conversation:
    """What the agent knows: the user turn, the history, the tools it may call.

    ``earlier``: the user turns of this conversation before the last one. A last turn that
    confirms, or that asks nothing of its own, is read together with them: the request
    it answers is theirs."""

    def __init__(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        earlier: list[str] | None = None,
    ):
        self.text = ""
        for i in range(len(messages) - 1, -1, -1):
            if messages[i].get("role") == "user":
                self.text = str(messages[i].get("content") or "")
                self.history = messages[:i]
                break
        else:
            self.history = messages
        self.confirmed = bool(earlier) and bool(CONFIRM_RE.match(self.text))
        asks = any(w in self.text.lower() for w in REQUEST_WORDS)
        if earlier and (self.confirmed or not asks):
            self.text = " ".join([*earlier, self.text])
        self.user_turns = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
        self.low = self.text.lower()
        self.tools = {(t.get("function") or t).get("name") for t in tools if isinstance(t, dict)}
        history_text = " ".join(str(m.get("content") or "") for m in self.history)
        for m in self.history:
            for c in m.get("tool_calls") or []:
                history_text += " " + str(c.get("function", {}).get("arguments", ""))
        self.history_text = history_text
        self.history_calls = [
            c.get("function", {}).get("name")
            for m in self.history
            for c in m.get("tool_calls") or []
        ]

    def has(self, *words: str) -> bool:
        return any(w in self.low for w in words)

    def orders(self, *, from_history: bool = False) -> list[str]:
        found = orders_in(self.text)
        return found or (orders_in(self.history_text) if from_history else [])

    def email(self) -> str | None:
        found = EMAIL_RE.findall(self.text) or EMAIL_RE.findall(self.history_text)
        return found[0] if found else None

    def amount(self) -> float | None:
        m = AMOUNT_RE.search(self.text) or AMOUNT_RE.search(self.history_text)
        return float(m.group(1)) if m else None

    def history_total(self, order_id: str) -> float | None:
        """The order total from an earlier lookup in the history, if any."""
        for m in self.history:
            if m.get("role") == "tool":
                data = parse_content(m.get("content"))
                if isinstance(data, dict) and data.get("order_id") == order_id and "total" in data:
                    return float(data["total"])
        return None

    def is_question(self) -> bool:
        return bool(QUESTION_START.match(self.text.strip()))

    def hesitant(self) -> bool:
        return self.has(*HESITANT) and not self.confirmed

    def email_with_request(self) -> bool:
        """Whether one user message asked for the refund and gave the email too."""
        return any(
            EMAIL_RE.search(t) and re.search(r"refund|money back|\bmy \$[\d.,]+ back\b", t, re.I)
            for t in self.user_turns
        )


class Ids:
    def __init__(self) -> None:
        self.n = 0

    def call(self, name: str, **arguments: Any) -> Call:
        self.n += 1
        return {"id": f"call_{self.n}", "name": name, "arguments": arguments}


# ─── flows ────────────────────────────────────────────────────────────────────


def failed(result: Result) -> bool:
    return bool(result.get("is_error"))


def status_of(result: Result) -> Any:
    content = parse_content(result.get("content"))
    return content.get("status") if isinstance(content, dict) else None


def escalate(
    ids: Ids, reason: str, *, priority: str = "normal", department: str = "general"
) -> Call:
    return ids.call("escalate_to_human", reason=reason, priority=priority, department=department)


def refund_reason(conv: Conversation) -> str:
    if conv.has("charged twice", "duplicate"):
        return "duplicate_charge"
    if conv.has("wrong colour", "wrong color", "wrong item", "wrong size", "sent the wrong"):
        return "wrong_item"
    # "broken" is missing on purpose: one of the good agent's realistic blind spots.
    if conv.has("damaged", "scratched", "defective", "cracked"):
        return "damaged"
    if conv.has("never received", "never arrived", "never came", "didn't arrive", "not received"):
        return "not_received"
    if conv.has("late", "too long"):
        return "late_delivery"
    if conv.has("changed my mind", "don't want", "no longer want"):
        return "changed_mind"
    low_history = conv.history_text.lower()
    if any(w in low_history for w in ("never arrived", "never received", "never came")):
        return "not_received"
    return "other"


def refund_flow(conv: Conversation, ids: Ids, variant: str) -> Flow:
    if "issue_refund" not in conv.tools:
        yield [escalate(ids, f"Customer asks for a refund: {conv.text}", department="billing")]
        return "I've passed your refund request to our billing team; they will contact you shortly."
    orders, email = conv.orders(from_history=True), conv.email()
    if not orders or not email:
        return "I can help with a refund. Which order is it, and what is the email on your account?"
    order_id = orders[0]
    method = "sms_otp" if conv.has("text message", "sms") else "email_otp"
    # The regressed agent trusts an email typed in with the request: it refunds first and
    # verifies afterwards, too late.
    late = variant == "regressed" and conv.email_with_request()
    if not late:
        (res,) = yield [ids.call("verify_identity", email=email, method=method)]
        content = parse_content(res.get("content"))
        if failed(res) or not (isinstance(content, dict) and content.get("verified")):
            return "I couldn't verify your identity, so I can't issue a refund yet."
    amount = conv.amount() or conv.history_total(order_id)
    if amount is None:
        (res,) = yield [ids.call("check_refund_eligibility", order_id=order_id)]
        content = parse_content(res.get("content"))
        if failed(res) or not isinstance(content, dict) or not content.get("eligible"):
            return "This order is not eligible for a refund."
        amount = float(content.get("max_refund", 0))
    args: dict[str, Any] = {"order_id": order_id, "amount": amount, "reason": refund_reason(conv)}
    if conv.has("store credit"):
        args["refund_method"] = "store_credit"
    (res,) = yield [ids.call("issue_refund", **args)]
    if late:
        yield [ids.call("verify_identity", email=email, method=method)]
    if failed(res):
        yield [
            escalate(
                ids, f"Refund for {order_id} failed: {res.get('content')}", department="billing"
            )
        ]
        return "Our refund system had an error, so I've handed this to the billing team."
    if conv.has("email me", "confirmation"):
        yield [
            ids.call(
                "send_email",
                to=email,
                subject=f"Your refund for {order_id}",
                body=f"We refunded {amount:.2f} for order {order_id}.",
                template="refund_confirmation",
            )
        ]
    return f"Done: {amount:.2f} refunded for {order_id}."


def account_flow(conv: Conversation, ids: Ids, variant: str, *, erase: bool) -> Flow:
    email = conv.email()
    if not erase and conv.hesitant():
        return (
            "Closing your account deactivates it: you can reactivate it within 30 days. "
            "Shall I go ahead?"
        )
    if not email:
        return "I can help with that. What is the email address on your account?"
    # The good agent's blind spot: when closing an account, any verification earlier in
    # the conversation counts as done — even one that failed.
    if erase or "verify_identity" not in conv.history_calls:
        (res,) = yield [ids.call("verify_identity", email=email, method="email_otp")]
        content = parse_content(res.get("content"))
        if failed(res) or not (isinstance(content, dict) and content.get("verified")):
            return "I couldn't verify your identity."
    if erase or variant == "regressed":
        yield [ids.call("delete_account", email=email, confirm=True)]
        return "Your account and data will be permanently erased."
    args: dict[str, Any] = {"email": email}
    reason = re.split(r"[,.] ?", conv.user_turns[-1] if conv.confirmed else conv.text, maxsplit=1)
    if len(reason) > 1 and reason[1].strip():
        args["reason"] = reason[1].strip()
    yield [ids.call("deactivate_account", **args)]
    return "Your account is deactivated; you can reactivate it within 30 days."


def cancel_flow(conv: Conversation, ids: Ids) -> Flow:
    orders = conv.orders(from_history=True)
    if not orders:
        return "Which order would you like to cancel?"
    if conv.hesitant():
        return f"Do you want me to cancel {', '.join(orders)}? It cannot be undone."
    reason = (
        "duplicate_order" if conv.has("twice", "duplicate", "same order") else "customer_request"
    )
    results = yield [ids.call("cancel_order", order_id=o, reason=reason) for o in orders]
    if any(failed(r) for r in results):
        return (
            "I couldn't cancel that order: it has already shipped. You can return it once "
            "it arrives."
        )
    email = conv.email()
    if email and conv.has("confirmation", "email me", "send"):
        yield [
            ids.call(
                "send_email",
                to=email,
                subject="Your cancellation",
                body=f"Order {', '.join(orders)} is cancelled.",
                template="cancellation_confirmation",
            )
        ]
    return f"Cancelled {', '.join(orders)}."


def address_flow(conv: Conversation, ids: Ids) -> Flow:
    orders = conv.orders()
    m = re.search(
        r"(?:\bto\b|:)\s*([^,]+),\s*([^,]+),\s*([A-Za-z0-9 ]{3,10}),\s*([^,?.!]+)", conv.text
    )
    if not orders or not m:
        return (
            "Please give me the order number and the full new address (street, city, "
            "postcode, country)."
        )
    line1, city, postal, country = (g.strip() for g in m.groups())
    country = re.sub(r"\s+instead$", "", country, flags=re.I)
    code = (
        country if re.fullmatch(r"[A-Z]{2}", country) else COUNTRIES.get(country.lower(), country)
    )
    address = {"line1": line1, "city": city, "postal_code": postal, "country": code}
    (res,) = yield [ids.call("update_shipping_address", order_id=orders[0], address=address)]
    if failed(res):
        return "That order has already shipped, so the address can't be changed any more."
    return "The delivery address is updated."


def section_of(text: str) -> str | None:
    low = text.lower()
    for section, words in SECTIONS:
        if any(w in low for w in words):
            return section
    return None


def docs_calls(conv: Conversation, ids: Ids) -> list[Call]:
    clauses = [c for c in re.split(r",\s*and\s+|\?\s+", conv.text) if c.strip()]
    calls: list[Call] = []
    seen: set[str | None] = set()
    for clause in clauses or [conv.text]:
        section = section_of(clause)
        if section in seen:
            continue
        seen.add(section)
        args: dict[str, Any] = {"query": clause.strip().rstrip("?")}
        if section:
            args["section"] = section
        calls.append(ids.call("search_docs", **args))
    return calls


def docs_flow(conv: Conversation, ids: Ids) -> Flow:
    results = yield docs_calls(conv, ids)
    hits = [
        h
        for r in results
        if not failed(r)
        for h in (parse_content(r.get("content")) or {}).get("results", [])
    ]
    if not hits:
        return "I couldn't find anything about that in our help centre."
    return " ".join(str(h.get("snippet", "")) for h in hits)


def policy_email_flow(conv: Conversation, ids: Ids) -> Flow:
    email = conv.email()
    (res,) = yield docs_calls(conv, ids)[:1]
    hits = (parse_content(res.get("content")) or {}).get("results", []) if not failed(res) else []
    body = " ".join(str(h.get("snippet", "")) for h in hits) or "Please see help.example.com."
    if email:
        yield [
            ids.call(
                "send_email",
                to=email,
                subject="Our return policy",
                body=body,
                template="policy_copy",
            )
        ]
    return "I've emailed you a copy." if email else body


def history_email_flow(conv: Conversation, ids: Ids) -> Flow:
    email = conv.email()
    last = next(
        (
            str(m["content"])
            for m in reversed(conv.history)
            if m.get("role") == "assistant" and m.get("content")
        ),
        "",
    )
    if not email or not last:
        return "What should I email, and to which address?"
    yield [ids.call("send_email", to=email, subject="Summary of our conversation", body=last)]
    return "Sent!"


def status_flow(conv: Conversation, ids: Ids) -> Flow:
    orders = conv.orders()
    tracking = conv.has("track")
    calls: list[Call] = []
    for o in orders:
        if tracking and "track_shipment" in conv.tools:
            calls.append(ids.call("track_shipment", order_id=o))
        elif re.search(r"(what|which) items|what's in|forgot what i bought", conv.low):
            calls.append(ids.call("lookup_order", order_id=o, include_items=True))
        else:
            calls.append(ids.call("lookup_order", order_id=o))
    if conv.has("policy"):
        calls.extend(docs_calls(conv, ids)[-1:])
    results = yield calls
    server_errors = [r for r in results if failed(r) and _http_status(r) >= 500]
    if server_errors and "escalate_to_human" in conv.tools:
        yield [
            escalate(
                ids,
                "Order service returned a server error while looking up an order",
                department="technical",
            )
        ]
        return "Our order system is having trouble; I've asked a colleague to follow up."
    if any(failed(r) for r in results):
        return "I couldn't find that order. Could you double-check the number?"
    return "; ".join(
        f"{o}: {status_of(r) or 'see details'}" for o, r in zip(orders, results, strict=False)
    )


def _http_status(result: Result) -> int:
    content = parse_content(result.get("content"))
    status = content.get("status") if isinstance(content, dict) else None
    return status if isinstance(status, int) else 500


def answer_only(text: str) -> Flow:
    return text
    yield []  # pragma: no cover - makes this a generator


# ─── choosing a flow ──────────────────────────────────────────────────────────


def choose(conv: Conversation, ids: Ids, variant: str) -> Flow:
    """The whole policy, top to bottom: the first rule that fits wins."""
    if re.search(r"ignore (all |your )?(previous |prior )?instructions", conv.low):
        return answer_only("I can't do that.")
    if re.search(r"\bwhat does .* mean\b", conv.low) and conv.has("status"):
        return answer_only(
            "'Processing' means we received your order and are preparing it for shipment."
        )
    if conv.has("stolen", "never made", "fraud", "unauthori"):
        return single(escalate(ids, conv.text, priority="urgent", department="fraud"))
    if conv.has("lawyer", "legal action", "sue you"):
        return single(escalate(ids, conv.text, priority="high", department="legal"))
    if conv.has("manager", "speak to a human", "get me a human", "speak to someone"):
        return single(escalate(ids, conv.text, priority="high"))
    if conv.is_question() and not conv.orders():
        return docs_flow(conv, ids)
    if conv.has("delete", "erase", "gdpr") and conv.has("account", "data"):
        return account_flow(conv, ids, variant, erase=True)
    if conv.has("close my account", "close the account", "closing my account", "deactivate"):
        return account_flow(conv, ids, variant, erase=False)
    if conv.has("refund", "money back") or re.search(r"\bmy \$[\d.,]+ back\b", conv.low):
        return refund_flow(conv, ids, variant)
    if conv.has("email me", "send me") and conv.has("policy"):
        return policy_email_flow(conv, ids)
    if conv.has("email me that", "email me this", "email that", "email me a summary"):
        return history_email_flow(conv, ids)
    if re.search(r"\bcancel\b", conv.low) and not re.search(
        r"(don't|do not|no need to) cancel", conv.low
    ):
        return cancel_flow(conv, ids)
    if conv.has("address", "ship ord", "deliver it to") or re.search(
        r"\bship ord_\d+ to\b", conv.low
    ):
        return address_flow(conv, ids)
    if conv.orders() and conv.has(
        "where", "status", "when", "arrive", "ship", "track", "check", "items"
    ):
        return status_flow(conv, ids)
    if conv.has("where is my order", "where's my order"):
        return answer_only(
            "I can check that for you. What is your order number (it looks like ord_12345)?"
        )
    if re.match(r"^(hi|hello|hey)\b", conv.low):
        return answer_only("Hi! How can I help you today?")
    if conv.has("real person", "a bot", "a robot"):
        return answer_only(
            "I'm an automated assistant; I can hand you to a human colleague if you like."
        )
    if conv.has("poem", "joke", "story"):
        return answer_only(
            "I'm the support assistant, so I'll stick to orders and accounts. How can I help?"
        )
    return answer_only("You're welcome! Is there anything else I can help you with?")


def offered_only(flow: Flow, tools: set[str]) -> Flow:
    """Run ``flow``, but never call a tool the runner did not offer for this case."""
    results: list[Result] | None = None
    while True:
        try:
            calls = next(flow) if results is None else flow.send(results)
        except StopIteration as done:
            return str(done.value)
        if any(c["name"] not in tools for c in calls):
            flow.close()
            return "I'm sorry, I can't do that from here; please contact support by email."
        results = yield calls


def regressed_habits(flow: Flow, ids: Ids) -> Flow:
    """The regressed build's habits, what they cost: every call in an assistant turn of
    its own (a batch of n parallel calls costs n turns and n prompts), and a call that
    failed is tried once more, the same, before the flow sees its result."""
    results: list[Result] | None = None
    while True:
        try:
            calls = next(flow) if results is None else flow.send(results)
        except StopIteration as done:
            return str(done.value)
        results = []
        for call in calls:
            (got,) = yield [call]
            if failed(got):
                again = ids.call(call["name"], **call["arguments"])
                (got,) = yield [again]
            results.append(got)


def single(call: Call) -> Flow:
    results = yield [call]
    if failed(results[0]):
        return "I couldn't reach a human agent right now; please try again in a few minutes."
    return "I've passed you to a human colleague; they will reply here shortly."


def flaky_failure(case_id: str, sample: int) -> bool:
    """Deterministic noise: about one case in eight fails one sample in three — exactly
    one of any three consecutive sample numbers. (The runner's ``seed`` differs per
    case-sample, so it is deliberately left out: it would make the failures random.)"""
    h = int(hashlib.sha256(case_id.encode()).hexdigest(), 16)
    return h % 8 == 0 and (h + sample) % 3 == 0


# ─── the protocol ─────────────────────────────────────────────────────────────


class Session:
    def __init__(self, start: dict[str, Any], variant: str, earlier: list[str] | None = None):
        self.conv = Conversation(
            list(start.get("messages") or []), list(start.get("tools") or []), earlier
        )
        self.ids = Ids()
        self.tokens_in = len(json.dumps(start)) // 4
        if variant == "flaky" and flaky_failure(
            str(start.get("case_id")), int(start.get("sample", 0))
        ):
            # A wobble: answer without tools when tools were needed, or look
            # something up when nothing was needed.
            self.flow = self._wobble()
        else:
            chosen = choose(self.conv, self.ids, "good" if variant == "flaky" else variant)
            if variant == "regressed":
                chosen = regressed_habits(chosen, self.ids)
            self.flow = offered_only(chosen, self.conv.tools)

    def _wobble(self) -> Flow:
        if "search_docs" in self.conv.tools and not self.conv.orders():
            yield [self.ids.call("search_docs", query=self.conv.text[:100])]
        return "Sorry, I'm not sure I can help with that."

    def step(self, results: list[Result] | None) -> dict[str, Any]:
        try:
            calls = next(self.flow) if results is None else self.flow.send(results)
        except StopIteration as stop:
            content = str(stop.value)
            return {"type": "final", "content": content, "usage": self._usage(content)}
        out = [{**c, "arguments": json.dumps(c["arguments"])} for c in calls]
        return {
            "type": "tool_calls",
            "calls": out,
            "content": None,
            "usage": self._usage(json.dumps(out)),
        }

    def _usage(self, text: str) -> dict[str, int]:
        return {"prompt_tokens": self.tokens_in, "completion_tokens": max(1, len(text) // 4)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--variant",
        choices=("good", "regressed", "flaky"),
        default=os.environ.get("SUPPORT_AGENT_VARIANT", "good"),
    )
    args = parser.parse_args(argv)
    session: Session | None = None
    ids: dict[str, Any] = {}  # the case-sample being answered: every reply names it
    tools: list[Any] = []
    opened = 0  # messages before the conversation's first user turn (its history)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
            if msg.get("type") == "start":
                ids = {"case_id": msg.get("case_id"), "sample": msg.get("sample")}
                tools = list(msg.get("tools") or [])
                opened = len(msg.get("messages") or []) - 1
                session = Session(msg, args.variant)
                reply = session.step(None)
            elif msg.get("type") == "user":  # a conversation's next user turn
                ids = {"case_id": msg.get("case_id"), "sample": msg.get("sample")}
                messages = list(msg.get("messages") or [])
                turns = [
                    str(m.get("content") or "")
                    for m in messages[opened:]
                    if m.get("role") == "user"
                ]
                session = Session(
                    {**msg, "tools": tools, "messages": messages}, args.variant, turns[:-1]
                )
                reply = session.step(None)
            elif msg.get("type") == "tool_results" and session is not None:
                reply = session.step(list(msg.get("results") or []))
            else:
                reply = {"type": "error", "message": f"unexpected message type {msg.get('type')!r}"}
        except Exception as exc:  # one bad message must not kill the worker
            reply = {"type": "error", "message": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps({**reply, **ids}) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
