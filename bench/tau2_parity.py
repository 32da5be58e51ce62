"""How often does ToolGate, judging effects, agree with τ²-bench's own reward?

Point it at τ²-bench results files (yours, or the published leaderboard trajectories)::

    python bench/tau2_parity.py RESULTS.json [RESULTS.json …] [--writes NAME,…]
        [--tools TOOLS.json] [--keep DIR] [--show N]

For each file it runs ``toolgate import tau2`` (with ``--untyped-tools`` when the file
keeps no tool definitions and ``--tools`` is not given), then ``toolgate score`` on the
result, and compares every simulation's sample verdict with τ²-bench's
``reward_info.reward`` (1.0 = pass). It prints the agreement rate and lists every
disagreement with both sides' reasons, classified:

* ``τ² also asks what the agent said`` — the writes held, but ``communicate_info`` was not
  said (COMMUNICATE is not judged from the calls);
* ``same database, other writes`` — τ²-bench's database matched although ToolGate saw an
  extra write or a write with other arguments (a write that changed nothing, an argument
  that does not reach the database);
* ``writes held, database differs`` — ToolGate's writes matched but the database did not
  (an order the database sees, arguments compared more loosely than the database does);
* ``other`` — anything else (please report it).

Simulations τ²-bench ended for reasons not the agent's (``user_error``,
``infrastructure_error``) are missing samples for ToolGate and left out; so are those
without a ``reward_info``.

The published trajectories are not part of this repository. ``--generate`` makes a
τ²-format results file of an airline-like world instead and measures it the same way::

    python bench/tau2_parity.py --generate [--tasks 60] [--trials 4] [--seed 0]
        [--trim] [--save FILE]

Its tasks have τ²-bench's shape (the airline domain's tools, evaluation actions with
``compare_args: null``, ``reward_basis: [DB, COMMUNICATE]``, about half without a write),
its world is made up here (users, reservations, flights), and each simulation is one of
the behaviours in :data:`BEHAVIOURS` — reads added, dropped, reordered or rephrased, a
refusal, an extra write, a doubled write, a write that fails and is retried, a write
with other arguments, swapped writes, a missing ``communicate_info``, a simulation ended
early. Its reward is computed the way τ²-bench computes it: the agent's writes replayed
on a fresh copy of the world against the reference actions replayed on another (the
tools' semantics reimplemented in :class:`Airline` from τ²-bench's airline toolkit,
errors included), the database compared, the communicate strings searched in the
agent's messages. ``--trim`` writes the file as the leaderboard trims it (messages
without ``id``, ``requestor`` and ``error``). It prints the agreement per behaviour.

Exit code 1 when the agreement is below 95 %.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import random
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GOAL = 0.95
NOW = "2024-05-15T15:00:00"


# ─── the airline world, with τ²-bench's tool semantics ────────────────────────


class ToolError(Exception):
    """A tool call that raised: τ²-bench answers ``Error: <message>`` and changes nothing."""


class Airline:
    """The airline toolkit's semantics (what each tool reads, writes and refuses), over a
    database of ``users``, ``reservations`` and ``flights`` shaped as τ²-bench's."""

    WRITES = (
        "book_reservation",
        "cancel_reservation",
        "send_certificate",
        "update_reservation_baggages",
        "update_reservation_flights",
        "update_reservation_passengers",
    )

    def __init__(self, db: dict[str, Any]) -> None:
        self.db = copy.deepcopy(db)

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.db, sort_keys=True).encode()).hexdigest()

    def call(self, name: str, args: dict[str, Any]) -> tuple[str, bool]:
        """(the tool message's content, whether it is an error)."""
        fn = getattr(self, "t_" + name, None)
        if fn is None:
            return f"Error: Tool '{name}' not found.", True
        before = copy.deepcopy(self.db)
        try:
            out = fn(**args)
        except (ToolError, TypeError, KeyError, ValueError) as exc:
            self.db = before  # a tool that raised changed nothing
            return f"Error: {exc}", True
        return (out if isinstance(out, str) else json.dumps(out)), False

    # helpers
    def _user(self, user_id: str) -> dict[str, Any]:
        if user_id not in self.db["users"]:
            raise ToolError(f"User {user_id} not found")
        return self.db["users"][user_id]

    def _reservation(self, rid: str) -> dict[str, Any]:
        if rid not in self.db["reservations"]:
            raise ToolError(f"Reservation {rid} not found")
        return self.db["reservations"][rid]

    def _instance(self, number: str, date: str) -> dict[str, Any]:
        if number not in self.db["flights"]:
            raise ToolError(f"Flight {number} not found")
        dates = self.db["flights"][number]["dates"]
        if date not in dates:
            raise ToolError(f"Flight {number} not found on date {date}")
        return dates[date]

    def _pay_update(self, user: dict[str, Any], payment_id: str, total: int) -> dict | None:
        if payment_id not in user["payment_methods"]:
            raise ToolError("Payment method not found")
        method = user["payment_methods"][payment_id]
        if method["source"] == "certificate":
            raise ToolError("Certificate cannot be used to update reservation")
        if method["source"] == "gift_card" and method["amount"] < total:
            raise ToolError("Gift card balance is not enough")
        if method["source"] == "gift_card":
            method["amount"] -= total
        return {"payment_id": payment_id, "amount": total} if total != 0 else None

    # reads
    def t_get_user_details(self, user_id: str) -> Any:
        return self._user(user_id)

    def t_get_reservation_details(self, reservation_id: str) -> Any:
        return self._reservation(reservation_id)

    def t_search_direct_flight(self, origin: str, destination: str, date: str) -> Any:
        out = []
        for f in self.db["flights"].values():
            d = f["dates"].get(date)
            if (
                f["origin"] == origin
                and f["destination"] == destination
                and d
                and (d["status"] == "available")
            ):
                out.append({**{k: v for k, v in f.items() if k != "dates"}, **d})
        return out

    def t_get_flight_status(self, flight_number: str, date: str) -> Any:
        return self._instance(flight_number, date)["status"]

    def t_list_all_airports(self) -> Any:
        return sorted({f["origin"] for f in self.db["flights"].values()})

    def t_calculate(self, expression: str) -> Any:
        if not all(ch in "0123456789+-*/(). " for ch in expression):
            raise ToolError("Invalid characters in expression")
        return str(round(float(eval(expression, {"__builtins__": None}, {})), 2))

    def t_transfer_to_human_agents(self, summary: str) -> Any:
        return "Transfer successful"

    # writes
    def t_book_reservation(
        self,
        user_id: str,
        origin: str,
        destination: str,
        flight_type: str,
        cabin: str,
        flights: list[dict[str, Any]],
        passengers: list[dict[str, Any]],
        payment_methods: list[dict[str, Any]],
        total_baggages: int,
        nonfree_baggages: int,
        insurance: str,
    ) -> Any:
        user = self._user(user_id)
        rid = next(
            (r for r in ("HATHAT", "HATHAU", "HATHAV") if r not in self.db["reservations"]), None
        )
        if rid is None:
            raise ToolError("Too many reservations")
        total = 0
        res_flights = []
        instances = []
        for fi in flights:
            flight = self.db["flights"].get(fi["flight_number"])
            inst = self._instance(fi["flight_number"], fi["date"])
            if inst["status"] != "available":
                raise ToolError(f"Flight {fi['flight_number']} not available on date {fi['date']}")
            if inst["available_seats"][cabin] < len(passengers):
                raise ToolError(f"Not enough seats on flight {fi['flight_number']}")
            price = inst["prices"][cabin]
            assert flight is not None
            res_flights.append(
                {
                    "origin": flight["origin"],
                    "destination": flight["destination"],
                    "flight_number": fi["flight_number"],
                    "date": fi["date"],
                    "price": price,
                }
            )
            instances.append(inst)
            total += price * len(passengers)
        if insurance == "yes":
            total += 30 * len(passengers)
        total += 50 * nonfree_baggages
        for p in payment_methods:
            if p["payment_id"] not in user["payment_methods"]:
                raise ToolError(f"Payment method {p['payment_id']} not found")
            m = user["payment_methods"][p["payment_id"]]
            if m["source"] in ("gift_card", "certificate") and m["amount"] < p["amount"]:
                raise ToolError(f"Not enough balance in payment method {p['payment_id']}")
        paid = sum(p["amount"] for p in payment_methods)
        if paid != total:
            raise ToolError(
                f"Payment amount does not add up, total price is {total}, but paid {paid}"
            )
        for p in payment_methods:
            m = user["payment_methods"][p["payment_id"]]
            if m["source"] == "gift_card":
                m["amount"] -= p["amount"]
            elif m["source"] == "certificate":
                user["payment_methods"].pop(p["payment_id"])
        for inst in instances:
            inst["available_seats"][cabin] -= len(passengers)
        res = {
            "reservation_id": rid,
            "user_id": user_id,
            "origin": origin,
            "destination": destination,
            "flight_type": flight_type,
            "cabin": cabin,
            "flights": res_flights,
            "passengers": copy.deepcopy(passengers),
            "payment_history": copy.deepcopy(payment_methods),
            "created_at": NOW,
            "total_baggages": total_baggages,
            "nonfree_baggages": nonfree_baggages,
            "insurance": insurance,
            "status": None,
        }
        self.db["reservations"][rid] = res
        user["reservations"].append(rid)
        return res

    def t_cancel_reservation(self, reservation_id: str) -> Any:
        res = self._reservation(reservation_id)
        res["payment_history"].extend(
            {"payment_id": p["payment_id"], "amount": -p["amount"]}
            for p in list(res["payment_history"])
        )
        res["status"] = "cancelled"
        return res

    def t_send_certificate(self, user_id: str, amount: int) -> Any:
        user = self._user(user_id)
        for pid in (f"certificate_{n}" for n in (3221322, 3221323, 3221324)):
            if pid not in user["payment_methods"]:
                user["payment_methods"][pid] = {
                    "id": pid,
                    "amount": amount,
                    "source": "certificate",
                }
                return f"Certificate {pid} added to user {user_id} with amount {amount}."
        raise ToolError("Too many certificates")

    def t_update_reservation_baggages(
        self, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str
    ) -> Any:
        res = self._reservation(reservation_id)
        user = self._user(res["user_id"])
        total = 50 * max(0, nonfree_baggages - res["nonfree_baggages"])
        payment = self._pay_update(user, payment_id, total)
        if payment is not None:
            res["payment_history"].append(payment)
        res["total_baggages"] = total_baggages
        res["nonfree_baggages"] = nonfree_baggages
        return res

    def t_update_reservation_flights(
        self, reservation_id: str, cabin: str, flights: list[dict[str, Any]], payment_id: str
    ) -> Any:
        res = self._reservation(reservation_id)
        user = self._user(res["user_id"])
        total = 0
        new = []
        for fi in flights:
            same = next(
                (
                    f
                    for f in res["flights"]
                    if f["flight_number"] == fi["flight_number"]
                    and f["date"] == fi["date"]
                    and cabin == res["cabin"]
                ),
                None,
            )
            if same is not None:
                total += same["price"] * len(res["passengers"])
                new.append(same)
                continue
            flight = self.db["flights"].get(fi["flight_number"])
            inst = self._instance(fi["flight_number"], fi["date"])
            if inst["status"] != "available":
                raise ToolError(f"Flight {fi['flight_number']} not available on date {fi['date']}")
            if inst["available_seats"][cabin] < len(res["passengers"]):
                raise ToolError(f"Not enough seats on flight {fi['flight_number']}")
            assert flight is not None
            f = {
                "flight_number": fi["flight_number"],
                "date": fi["date"],
                "price": inst["prices"][cabin],
                "origin": flight["origin"],
                "destination": flight["destination"],
            }
            total += f["price"] * len(res["passengers"])
            new.append(f)
        total -= sum(f["price"] for f in res["flights"]) * len(res["passengers"])
        payment = self._pay_update(user, payment_id, total)
        if payment is not None:
            res["payment_history"].append(payment)
        res["flights"] = new
        res["cabin"] = cabin
        return res

    def t_update_reservation_passengers(
        self, reservation_id: str, passengers: list[dict[str, Any]]
    ) -> Any:
        res = self._reservation(reservation_id)
        if len(passengers) != len(res["passengers"]):
            raise ToolError("Number of passengers does not match")
        res["passengers"] = copy.deepcopy(passengers)
        return res


TOOL_PARAMS: dict[str, dict[str, str]] = {
    "book_reservation": {
        "user_id": "string",
        "origin": "string",
        "destination": "string",
        "flight_type": "string",
        "cabin": "string",
        "flights": "array",
        "passengers": "array",
        "payment_methods": "array",
        "total_baggages": "integer",
        "nonfree_baggages": "integer",
        "insurance": "string",
    },
    "calculate": {"expression": "string"},
    "cancel_reservation": {"reservation_id": "string"},
    "get_flight_status": {"flight_number": "string", "date": "string"},
    "get_reservation_details": {"reservation_id": "string"},
    "get_user_details": {"user_id": "string"},
    "list_all_airports": {},
    "search_direct_flight": {"origin": "string", "destination": "string", "date": "string"},
    "send_certificate": {"user_id": "string", "amount": "integer"},
    "transfer_to_human_agents": {"summary": "string"},
    "update_reservation_baggages": {
        "reservation_id": "string",
        "total_baggages": "integer",
        "nonfree_baggages": "integer",
        "payment_id": "string",
    },
    "update_reservation_flights": {
        "reservation_id": "string",
        "cabin": "string",
        "flights": "array",
        "payment_id": "string",
    },
    "update_reservation_passengers": {"reservation_id": "string", "passengers": "array"},
}


def tool_defs() -> dict[str, Any]:
    """The tools as τ²-bench's ``info.environment_info.tool_defs`` lists them."""
    return {
        name: {
            "name": name,
            "doc": name.replace("_", " "),
            "params": {
                "type": "object",
                "title": "parameters",
                "properties": {k: {"type": t, "title": k} for k, t in params.items()},
                "required": list(params),
            },
            "returns": None,
        }
        for name, params in sorted(TOOL_PARAMS.items())
    }


# ─── a made-up world ──────────────────────────────────────────────────────────

FIRST = ["Mia", "Noah", "Emma", "Liam", "Ava", "Omar", "Yusuf", "Sofia", "Chen", "Ivan", "Aisha"]
LAST = ["Kim", "Garcia", "Silva", "Rossi", "Khan", "Lopez", "Nguyen", "Smith", "Ito", "Novak"]
AIRPORTS = ["JFK", "LAX", "SFO", "ORD", "DFW", "SEA", "BOS", "MIA", "ATL", "DEN"]
DATES = [f"2024-05-{d:02d}" for d in range(16, 29)]
CABINS = ("basic_economy", "economy", "business")


def make_world(rng: random.Random, users: int = 40) -> dict[str, Any]:
    flights: dict[str, Any] = {}
    n = 0
    for o in AIRPORTS:
        for d in rng.sample([a for a in AIRPORTS if a != o], 4):
            n += 1
            number = f"HAT{n:03d}"
            base = rng.randint(60, 180)
            flights[number] = {
                "flight_number": number,
                "origin": o,
                "destination": d,
                "scheduled_departure_time_est": f"{rng.randint(5, 20):02d}:00:00",
                "scheduled_arrival_time_est": f"{rng.randint(6, 23):02d}:30:00",
                "dates": {
                    day: {
                        "status": "available" if rng.random() < 0.9 else "cancelled",
                        "available_seats": {c: rng.randint(0, 12) for c in CABINS},
                        "prices": {  # a fare moves from day to day
                            "basic_economy": (low := base + rng.randint(-20, 20)),
                            "economy": low + rng.randint(40, 90),
                            "business": low * 3 + rng.randint(0, 200),
                        },
                    }
                    for day in DATES
                },
            }
    db: dict[str, Any] = {"flights": flights, "users": {}, "reservations": {}}
    letters = "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"
    for u in range(users):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        uid = f"{first.lower()}_{last.lower()}_{1000 + u * 37}"
        methods: dict[str, Any] = {}
        for kind in rng.sample(["credit_card", "gift_card", "certificate"], rng.randint(1, 3)):
            pid = f"{kind}_{rng.randint(1000000, 9999999)}"
            m: dict[str, Any] = {"source": kind, "id": pid}
            if kind == "credit_card":
                m.update(
                    brand=rng.choice(["visa", "mastercard"]),
                    last_four=f"{rng.randint(0, 9999):04d}",
                )
            else:
                m["amount"] = rng.choice([100, 150, 250, 500])
            methods[pid] = m
        if not any(m["source"] == "credit_card" for m in methods.values()):
            pid = f"credit_card_{rng.randint(1000000, 9999999)}"
            methods[pid] = {
                "source": "credit_card",
                "id": pid,
                "brand": "visa",
                "last_four": "4242",
            }
        user = {
            "user_id": uid,
            "name": {"first_name": first, "last_name": last},
            "dob": f"19{rng.randint(50, 99)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}",
            "payment_methods": methods,
            "membership": rng.choice(["regular", "silver", "gold"]),
            "reservations": [],
        }
        db["users"][uid] = user
        for _ in range(rng.randint(1, 3)):
            rid = "".join(rng.choice(letters) for _ in range(6))
            number = rng.choice(sorted(flights))
            f = flights[number]
            day = rng.choice(DATES)
            cabin = rng.choice(CABINS)
            pax = [
                {"first_name": first, "last_name": last, "dob": user["dob"]},
                *(
                    {"first_name": rng.choice(FIRST), "last_name": last, "dob": "2001-02-03"}
                    for _ in range(rng.randint(0, 2))
                ),
            ]
            price = f["dates"][day]["prices"][cabin]
            card = next(p for p, m in methods.items() if m["source"] == "credit_card")
            db["reservations"][rid] = {
                "reservation_id": rid,
                "user_id": uid,
                "origin": f["origin"],
                "destination": f["destination"],
                "flight_type": "one_way",
                "cabin": cabin,
                "flights": [
                    {
                        "origin": f["origin"],
                        "destination": f["destination"],
                        "flight_number": number,
                        "date": day,
                        "price": price,
                    }
                ],
                "passengers": pax,
                "payment_history": [{"payment_id": card, "amount": price * len(pax)}],
                "created_at": "2024-05-01T10:00:00",
                "total_baggages": rng.randint(0, 2),
                "nonfree_baggages": 0,
                "insurance": rng.choice(["yes", "no"]),
                "status": None,
            }
            user["reservations"].append(rid)
    return db


# ─── tasks of τ²-bench's shape ────────────────────────────────────────────────


def _act(i: int, name: str, **args: Any) -> dict[str, Any]:
    return {
        "action_id": f"{name}_{i}",
        "requestor": "assistant",
        "name": name,
        "arguments": args,
        "info": None,
        "compare_args": None,
    }


def _card(user: dict[str, Any], rng: random.Random, source: str = "credit_card") -> str | None:
    ids = [p for p, m in user["payment_methods"].items() if m["source"] == source]
    return rng.choice(sorted(ids)) if ids else None


def _open_reservations(db: dict[str, Any], user: dict[str, Any]) -> list[str]:
    return [r for r in user["reservations"] if db["reservations"][r]["status"] is None]


def _new_flight(
    db: dict[str, Any], res: dict[str, Any], rng: random.Random
) -> dict[str, Any] | None:
    """Another available flight on the reservation's route with seats in its cabin."""
    need = len(res["passengers"])
    options = [
        {"flight_number": n, "date": day}
        for n, f in sorted(db["flights"].items())
        if f["origin"] == res["origin"] and f["destination"] == res["destination"]
        for day, d in sorted(f["dates"].items())
        if d["status"] == "available"
        and d["available_seats"][res["cabin"]] >= need
        and (n, day) != (res["flights"][0]["flight_number"], res["flights"][0]["date"])
    ]
    return rng.choice(options) if options else None


def make_task(i: int, db: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    """One task: a kind drawn as τ²-bench's airline tasks spread (about half write nothing)."""
    user = db["users"][rng.choice(sorted(db["users"]))]
    uid = user["user_id"]
    open_res = _open_reservations(db, user)
    if not open_res:
        return None
    rid = rng.choice(open_res)
    res = db["reservations"][rid]
    kind = rng.choices(
        ["refuse", "refuse_lookup", "cancel", "baggage", "passengers", "flights", "book",
         "certificate", "cancel_two", "flights_baggage", "fare_question"],
        weights=[14, 10, 8, 5, 4, 6, 5, 4, 2, 2, 4],
    )[0]  # fmt: skip
    actions: list[dict[str, Any]] = []
    communicate: list[str] = []
    reason = ""
    if kind == "refuse":
        reason = f"You want to cancel reservation {rid}, though it is not refundable."
    elif kind == "refuse_lookup":
        reason = f"You want compensation for reservation {rid}; you are not eligible."
        actions = [
            _act(0, "get_user_details", user_id=uid),
            _act(1, "get_reservation_details", reservation_id=rid),
        ]
    elif kind == "cancel":
        reason = f"You want to cancel reservation {rid}."
        actions = [
            _act(0, "get_reservation_details", reservation_id=rid),
            _act(1, "cancel_reservation", reservation_id=rid),
        ]
    elif kind == "baggage":
        card = _card(user, rng) or _card(user, rng, "gift_card")
        nonfree = rng.randint(1, 2)
        reason = f"You want to add {nonfree} checked bag(s) to reservation {rid}."
        actions = [
            _act(0, "get_reservation_details", reservation_id=rid),
            _act(
                1,
                "update_reservation_baggages",
                reservation_id=rid,
                total_baggages=res["total_baggages"] + nonfree,
                nonfree_baggages=nonfree,
                payment_id=card,
            ),
        ]
    elif kind == "passengers":
        pax = copy.deepcopy(res["passengers"])
        name = rng.choice([n for n in FIRST if n != pax[-1]["first_name"]])
        pax[-1] = {**pax[-1], "first_name": name}
        reason = f"You want to change a passenger's name on reservation {rid}."
        actions = [
            _act(0, "get_reservation_details", reservation_id=rid),
            _act(1, "update_reservation_passengers", reservation_id=rid, passengers=pax),
        ]
    elif kind in ("flights", "flights_baggage"):
        nf = _new_flight(db, res, rng)
        if nf is None:
            return None
        card = _card(user, rng)
        reason = (
            f"You want to move reservation {rid} to flight {nf['flight_number']} on {nf['date']}."
        )
        actions = [
            _act(0, "get_reservation_details", reservation_id=rid),
            _act(
                1,
                "search_direct_flight",
                origin=res["origin"],
                destination=res["destination"],
                date=nf["date"],
            ),
            _act(
                2,
                "update_reservation_flights",
                reservation_id=rid,
                cabin=res["cabin"],
                flights=[nf],
                payment_id=card,
            ),
        ]
        if kind == "flights_baggage":
            actions.append(
                _act(
                    3,
                    "update_reservation_baggages",
                    reservation_id=rid,
                    total_baggages=res["total_baggages"] + 1,
                    nonfree_baggages=1,
                    payment_id=card,
                )
            )
            reason += " You also want one more checked bag."
    elif kind == "book":
        flight = next(
            (
                (n, day)
                for n, f in sorted(db["flights"].items(), key=lambda _: rng.random())
                for day, d in sorted(f["dates"].items())
                if d["status"] == "available" and d["available_seats"]["economy"] >= 1
            ),
            None,
        )
        if flight is None:
            return None
        n, day = flight
        f = db["flights"][n]
        price = f["dates"][day]["prices"]["economy"]
        insurance = rng.choice(["yes", "no"])
        total = price + (30 if insurance == "yes" else 0)
        gift = _card(user, rng, "gift_card")
        card = _card(user, rng)
        pays = [{"payment_id": card, "amount": total}]
        if gift and user["payment_methods"][gift]["amount"] < total:
            amount = user["payment_methods"][gift]["amount"]
            pays = [
                {"payment_id": gift, "amount": amount},
                {"payment_id": card, "amount": total - amount},
            ]
        reason = (
            f"You want to book a one-way economy flight from {f['origin']} to "
            f"{f['destination']} on {day}."
        )
        actions = [
            _act(0, "get_user_details", user_id=uid),
            _act(
                1,
                "search_direct_flight",
                origin=f["origin"],
                destination=f["destination"],
                date=day,
            ),
            _act(
                2,
                "book_reservation",
                user_id=uid,
                origin=f["origin"],
                destination=f["destination"],
                flight_type="one_way",
                cabin="economy",
                flights=[{"flight_number": n, "date": day}],
                passengers=[
                    {
                        "first_name": user["name"]["first_name"],
                        "last_name": user["name"]["last_name"],
                        "dob": user["dob"],
                    }
                ],
                payment_methods=pays,
                total_baggages=0,
                nonfree_baggages=0,
                insurance=insurance,
            ),
        ]
    elif kind == "certificate":
        amount = 50 * len(res["passengers"])
        reason = f"Your flight on reservation {rid} was delayed; you want compensation."
        actions = [
            _act(0, "get_reservation_details", reservation_id=rid),
            _act(1, "send_certificate", user_id=uid, amount=amount),
        ]
    elif kind == "cancel_two":
        if len(open_res) < 2:
            return None
        r1, r2 = rng.sample(open_res, 2)
        reason = f"You want to cancel reservations {r1} and {r2}."
        actions = [
            _act(0, "cancel_reservation", reservation_id=r1),
            _act(1, "cancel_reservation", reservation_id=r2),
        ]
    elif kind == "fare_question":
        total = sum(f["price"] for f in res["flights"]) * len(res["passengers"])
        reason = f"You want to know what you paid for reservation {rid}."
        actions = [
            _act(0, "get_reservation_details", reservation_id=rid),
            _act(
                1,
                "calculate",
                expression=f"{res['flights'][0]['price']} * {len(res['passengers'])}",
            ),
        ]
        communicate = [str(total)]
    return {
        "id": str(i),
        "description": {"purpose": kind, "relevant_policies": None, "notes": None},
        "user_scenario": {
            "persona": None,
            "instructions": {
                "task_instructions": "Be polite.",
                "domain": "airline",
                "reason_for_call": reason,
                "known_info": f"Your user id is {uid}.",
                "unknown_info": None,
            },
        },
        "initial_state": None,
        "evaluation_criteria": {
            "actions": actions,
            "communicate_info": communicate,
            "nl_assertions": None,
            "reward_basis": ["DB", "COMMUNICATE"],
        },
        "annotations": None,
    }


# ─── agents' behaviours ───────────────────────────────────────────────────────

Step = list[tuple[str, dict[str, Any]]]
"""The tool calls of one assistant message (a parallel batch when more than one)."""


@dataclass
class Plan:
    steps: list[Step]
    final: str
    termination: str = "user_stop"


def _user_of(task: dict[str, Any]) -> str:
    return task["user_scenario"]["instructions"]["known_info"].split()[-1].rstrip(".")


def _gold(task: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (a["name"], copy.deepcopy(a["arguments"])) for a in task["evaluation_criteria"]["actions"]
    ]


def _final(task: dict[str, Any], said: bool = True) -> str:
    info = task["evaluation_criteria"]["communicate_info"]
    if info and said:
        return f"The total you paid was {info[0]}. Anything else?"
    return "I have taken care of that for you. Anything else?"


def _is_write(name: str) -> bool:
    return name in Airline.WRITES


def b_gold(task: dict[str, Any], db: dict[str, Any], rng: random.Random) -> Plan | None:
    return Plan([[c] for c in _gold(task)], _final(task))


def b_extra_reads(task: dict[str, Any], db: dict[str, Any], rng: random.Random) -> Plan | None:
    uid = _user_of(task)
    steps = [[c] for c in _gold(task)]
    extras: list[tuple[str, dict[str, Any]]] = [
        ("get_user_details", {"user_id": uid}),
        ("list_all_airports", {}),
    ]
    for r in db["users"][uid]["reservations"]:
        extras.append(("get_reservation_details", {"reservation_id": r}))
    for e in rng.sample(extras, min(len(extras), rng.randint(1, 3))):
        steps.insert(rng.randint(0, len(steps)), [e])
    return Plan(steps, _final(task))


def b_reads_reworded(task: dict[str, Any], db: dict[str, Any], rng: random.Random) -> Plan | None:
    """Reads dropped, reordered, batched or rephrased (``2 * (a + b)`` for ``2*a + 2*b``)."""
    gold = _gold(task)
    reads = [c for c in gold if not _is_write(c[0])]
    writes = [c for c in gold if _is_write(c[0])]
    rng.shuffle(reads)
    reads = [
        ("calculate", {"expression": "(" + a["expression"].replace(" * ", ")*")})
        if n == "calculate"
        else (n, a)
        for n, a in reads
    ]
    if reads and rng.random() < 0.4:
        reads.pop()
    steps: list[Step] = [reads] if len(reads) > 1 and rng.random() < 0.5 else [[r] for r in reads]
    steps += [[w] for w in writes]
    return Plan(steps, _final(task))


def b_refusal(task: dict[str, Any], db: dict[str, Any], rng: random.Random) -> Plan | None:
    reads = [[c] for c in _gold(task) if not _is_write(c[0])] or [
        [("get_user_details", {"user_id": _user_of(task)})]
    ]
    return Plan(reads, "I am sorry, I cannot do that under our policy.")


def _extra_target(
    task: dict[str, Any], db: dict[str, Any], rng: random.Random
) -> tuple[str, dict[str, Any]]:
    uid = _user_of(task)
    gold_rids = {
        a["arguments"].get("reservation_id") for a in task["evaluation_criteria"]["actions"]
    }
    others = [r for r in _open_reservations(db, db["users"][uid]) if r not in gold_rids]
    if others and rng.random() < 0.6:
        return "cancel_reservation", {"reservation_id": rng.choice(others)}
    if gold_rids - {None} and not any(
        _is_write(a["name"]) for a in task["evaluation_criteria"]["actions"]
    ):
        return "cancel_reservation", {"reservation_id": sorted(gold_rids - {None})[0]}
    return "send_certificate", {"user_id": uid, "amount": 100}


def b_extra_write(task: dict[str, Any], db: dict[str, Any], rng: random.Random) -> Plan | None:
    steps = [[c] for c in _gold(task)]
    steps.insert(rng.randint(0, len(steps)), [_extra_target(task, db, rng)])
    return Plan(steps, _final(task))


def b_extra_write_failed(
    task: dict[str, Any], db: dict[str, Any], rng: random.Random
) -> Plan | None:
    bad = rng.choice(
        [
            ("cancel_reservation", {"reservation_id": "ZZZ999"}),
            ("send_certificate", {"user_id": "nobody_1", "amount": 100}),
            ("update_reservation_passengers", {"reservation_id": "ZZZ999", "passengers": []}),
        ]
    )
    steps = [[c] for c in _gold(task)]
    steps.insert(rng.randint(0, len(steps)), [bad])
    return Plan(steps, _final(task))


def b_doubled_write(task: dict[str, Any], db: dict[str, Any], rng: random.Random) -> Plan | None:
    gold = _gold(task)
    at = [i for i, c in enumerate(gold) if _is_write(c[0])]
    if not at:
        return None
    i = rng.choice(at)
    steps = [[c] for c in gold]
    steps.insert(i + 1, [copy.deepcopy(gold[i])])
    return Plan(steps, _final(task))


def b_failed_then_fixed(
    task: dict[str, Any], db: dict[str, Any], rng: random.Random
) -> Plan | None:
    gold = _gold(task)
    at = [i for i, c in enumerate(gold) if _is_write(c[0])]
    if not at:
        return None
    i = rng.choice(at)
    name, args = copy.deepcopy(gold[i])
    if "payment_id" in args:
        args["payment_id"] = "credit_card_0000000"
    elif "payment_methods" in args:
        args["payment_methods"] = [
            {**p, "amount": p["amount"] + 1} for p in args["payment_methods"]
        ]
    elif "reservation_id" in args and name == "update_reservation_passengers":
        args["passengers"] = args["passengers"] + [args["passengers"][0]]
    elif "reservation_id" in args:
        args["reservation_id"] = args["reservation_id"][::-1] + "X"
    else:
        args["user_id"] = args["user_id"] + "x"
    steps = [[c] for c in gold]
    steps.insert(i, [(name, args)])
    return Plan(steps, _final(task))


def b_wrong_args(task: dict[str, Any], db: dict[str, Any], rng: random.Random) -> Plan | None:
    gold = _gold(task)
    at = [i for i, c in enumerate(gold) if _is_write(c[0])]
    if not at:
        return None
    i = rng.choice(at)
    name, args = gold[i]
    uid = _user_of(task)
    user = db["users"][uid]
    if "payment_id" in args:
        others = [
            p
            for p in sorted(user["payment_methods"])
            if p != args["payment_id"] and user["payment_methods"][p]["source"] != "certificate"
        ]
        if others and rng.random() < 0.6:
            args["payment_id"] = rng.choice(others)
        elif "nonfree_baggages" in args:
            args["nonfree_baggages"] += 1
            args["total_baggages"] += 1
        else:
            args["cabin"] = "business" if args["cabin"] != "business" else "economy"
    elif name == "update_reservation_passengers":
        args["passengers"][-1]["dob"] = "1999-12-31"
    elif name == "send_certificate":
        args["amount"] += 50
    elif name == "book_reservation":
        args["insurance"] = "no" if args["insurance"] == "yes" else "yes"
        diff = 30 if args["insurance"] == "yes" else -30
        args["payment_methods"][-1]["amount"] += diff
    elif name == "cancel_reservation":
        others = [r for r in user["reservations"] if r != args["reservation_id"]]
        if not others:
            return None
        args["reservation_id"] = rng.choice(others)
    return Plan([[c] for c in gold], _final(task))


def b_swapped_writes(task: dict[str, Any], db: dict[str, Any], rng: random.Random) -> Plan | None:
    gold = _gold(task)
    at = [i for i, c in enumerate(gold) if _is_write(c[0])]
    if len(at) < 2:
        return None
    i, j = at[0], at[1]
    gold[i], gold[j] = gold[j], gold[i]
    return Plan([[c] for c in gold], _final(task))


def b_not_said(task: dict[str, Any], db: dict[str, Any], rng: random.Random) -> Plan | None:
    if not task["evaluation_criteria"]["communicate_info"]:
        return None
    return Plan([[c] for c in _gold(task)], _final(task, said=False))


def b_ended_early(task: dict[str, Any], db: dict[str, Any], rng: random.Random) -> Plan | None:
    gold = _gold(task)
    return Plan([[c] for c in gold[: max(0, len(gold) - 1)]], "", termination="max_steps")


BEHAVIOURS: dict[
    str, tuple[float, Callable[[dict[str, Any], dict[str, Any], random.Random], Plan | None]]
] = {
    "as the reference": (26, b_gold),
    "extra reads": (14, b_extra_reads),
    "reads dropped, reordered or reworded": (12, b_reads_reworded),
    "refusal (reads only)": (10, b_refusal),
    "extra write": (6, b_extra_write),
    "extra write that failed": (5, b_extra_write_failed),
    "doubled write": (4, b_doubled_write),
    "failed write, retried": (6, b_failed_then_fixed),
    "write with other arguments": (8, b_wrong_args),
    "writes swapped": (3, b_swapped_writes),
    "communicate_info not said": (3, b_not_said),
    "ended early (max_steps)": (3, b_ended_early),
}
"""Behaviour → (weight, plan). A behaviour that does not apply to a task (a doubled write
on a task that writes nothing) is drawn again."""


# ─── a simulation, rewarded as τ²-bench rewards it ────────────────────────────


def simulate(
    task: dict[str, Any], db: dict[str, Any], plan: Plan, trial: int, trim: bool
) -> dict[str, Any]:
    env = Airline(db)
    messages: list[dict[str, Any]] = []
    turn = 0
    seq = 0

    def add(msg: dict[str, Any]) -> None:
        nonlocal turn
        msg["turn_idx"] = turn
        msg["timestamp"] = f"2025-06-01T10:{turn // 60:02d}:{turn % 60:02d}"
        turn += 1
        messages.append(msg)

    add({"role": "assistant", "content": "Hi! How can I help you today?", "tool_calls": None})
    reason = task["user_scenario"]["instructions"]["reason_for_call"]
    add(
        {
            "role": "user",
            "content": reason + " " + task["user_scenario"]["instructions"]["known_info"],
            "tool_calls": None,
        }
    )
    writes: list[tuple[str, dict[str, Any]]] = []
    for step in plan.steps:
        calls = []
        for name, args in step:
            seq += 1
            calls.append(
                {
                    "id": f"call_{trial}_{seq}",
                    "name": name,
                    "arguments": args,
                    "requestor": "assistant",
                }
            )
        add({"role": "assistant", "content": None, "tool_calls": calls})
        for c in calls:
            content, error = env.call(c["name"], copy.deepcopy(c["arguments"]))
            if _is_write(c["name"]):
                writes.append((c["name"], c["arguments"]))
            add(
                {
                    "id": c["id"],
                    "role": "tool",
                    "content": content,
                    "requestor": "assistant",
                    "error": error,
                }
            )
    if plan.final:
        add({"role": "assistant", "content": plan.final, "tool_calls": None})
        add({"role": "user", "content": "No, thank you. ###STOP###", "tool_calls": None})
    if trim:
        for m in messages:
            for k in ("id", "requestor", "error"):
                m.pop(k, None)
    return {
        "id": f"sim-{task['id']}-{trial}",
        "task_id": task["id"],
        "timestamp": "2025-06-01T10:00:00",
        "start_time": "2025-06-01T10:00:00",
        "end_time": "2025-06-01T10:05:00",
        "duration": 300.0 + turn,
        "termination_reason": plan.termination,
        "agent_cost": 0.01,
        "user_cost": 0.01,
        "reward_info": reward(task, db, writes, messages, plan.termination),
        "messages": messages,
        "trial": trial,
        "seed": 300 + trial,
        "mode": "half_duplex",
    }


def reward(
    task: dict[str, Any],
    db: dict[str, Any],
    writes: Sequence[tuple[str, dict[str, Any]]],
    messages: Sequence[dict[str, Any]],
    termination: str,
) -> dict[str, Any]:
    """τ²-bench's reward (basis DB × COMMUNICATE): the agent's writes replayed on one copy
    of the world, the reference actions on another, the databases compared; each
    ``communicate_info`` searched (lower case, commas removed) in the agent's messages."""
    if termination not in ("agent_stop", "user_stop"):
        return {
            "reward": 0.0,
            "reward_basis": None,
            "info": {
                "note": f"Simulation terminated prematurely. Termination reason: {termination}"
            },
        }
    gold = Airline(db)
    for a in task["evaluation_criteria"]["actions"]:
        gold.call(a["name"], copy.deepcopy(a["arguments"]))
    predicted = Airline(db)
    for name, args in writes:
        predicted.call(name, copy.deepcopy(args))
    db_ok = gold.digest() == predicted.digest()
    checks = []
    for info in task["evaluation_criteria"]["communicate_info"]:
        met = any(
            m["role"] == "assistant"
            and isinstance(m.get("content"), str)
            and info.lower() in m["content"].lower().replace(",", "")
            for m in messages
        )
        checks.append({"info": info, "met": met, "justification": ""})
    comm = 1.0 if all(c["met"] for c in checks) else 0.0
    db_reward = 1.0 if db_ok else 0.0
    action_checks = [
        {
            "action": a,
            "action_match": False,
            "action_reward": 0.0,
            "tool_type": "write" if _is_write(a["name"]) else "read",
        }
        for a in task["evaluation_criteria"]["actions"]
    ]
    return {
        "reward": db_reward * comm,
        "db_check": {"db_match": db_ok, "db_reward": db_reward},
        "env_assertions": [],
        "action_checks": action_checks,
        "nl_assertions": None,
        "communicate_checks": checks,
        "reward_basis": ["DB", "COMMUNICATE"],
        "reward_breakdown": {"DB": db_reward, "COMMUNICATE": comm},
        "info": None,
    }


def generate(
    n_tasks: int, trials: int, seed: int, trim: bool
) -> tuple[dict[str, Any], dict[tuple[str, int], str]]:
    """A τ²-format results file and, per (task, trial), the behaviour simulated."""
    rng = random.Random(seed)
    db = make_world(rng)
    tasks: list[dict[str, Any]] = []
    while len(tasks) < n_tasks:
        t = make_task(len(tasks), db, rng)
        if t is not None:
            tasks.append(t)
    names = list(BEHAVIOURS)
    weights = [BEHAVIOURS[n][0] for n in names]
    sims = []
    kinds: dict[tuple[str, int], str] = {}
    for t in tasks:
        for trial in range(trials):
            plan: Plan | None = None
            while plan is None:  # a behaviour that does not apply to the task: draw again
                kind = rng.choices(names, weights)[0]
                plan = BEHAVIOURS[kind][1](t, db, rng)
            sims.append(simulate(t, db, plan, trial, trim))
            kinds[(t["id"], trial)] = kind
    results = {
        "timestamp": "2025-06-01T10:00:00",
        "info": {
            "git_commit": "0" * 40,
            "num_trials": trials,
            "max_steps": 200,
            "max_errors": 10,
            "user_info": {"implementation": "user_simulator", "llm": "made-up", "llm_args": {}},
            "agent_info": {"implementation": "llm_agent", "llm": "made-up", "llm_args": {}},
            "environment_info": {"domain_name": "airline", "policy": "…", "tool_defs": None},
            "seed": seed,
        },
        "tasks": tasks,
        "simulations": sims,
    }
    return results, kinds


# ─── parity ───────────────────────────────────────────────────────────────────


@dataclass
class Outcome:
    task: str
    trial: int
    reward: float
    passed: bool
    checks: list[str]
    reason: str
    kind: str = ""
    why: dict[str, Any] = field(default_factory=dict)


def _toolgate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gate", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )


def _first_sentence(sample: dict[str, Any]) -> str:
    sys.path.insert(0, str(ROOT))
    from gate.report.sentences import check_sentences
    from gate.results import SampleResult

    said = check_sentences(SampleResult.model_validate(sample))
    return (
        "".join(str(p) for p in said[0][1]) if said else ", ".join(sample.get("failed_checks", []))
    )


def parity(path: Path, work: Path, extra: Sequence[str]) -> list[Outcome]:
    """Import, score, and compare every simulation of one results file."""
    meta = path / "results.json" if path.is_dir() else path
    data = json.loads(meta.read_text())
    env = (data.get("info") or {}).get("environment_info") or {}
    args = ["import", "tau2", str(path), "--out", str(work), "--force", *extra]
    if not env.get("tool_defs") and "--tools" not in extra:
        args.append("--untyped-tools")
    p = _toolgate(*args)
    if p.returncode != 0:
        sys.exit(f"toolgate import tau2 failed on {path}:\n{p.stderr}")
    p = _toolgate(
        "score",
        "--config",
        str(work / "toolgate.yml"),
        "--runs",
        str(work / "runs.jsonl"),
        "--out",
        str(work / "out"),
    )
    if p.returncode != 0:
        sys.exit(f"toolgate score failed on {path}:\n{p.stderr}")
    res = json.loads((work / "out" / "results.json").read_text())
    verdict: dict[tuple[str, int], dict[str, Any]] = {}
    for c in res["cases"]:
        for s in c["samples"]:
            verdict[(c["id"], s["sample"])] = s
    sims = data.get("simulations") or []
    if not sims and (meta.parent / "simulations").is_dir():
        sims = [
            json.loads(f.read_text()) for f in sorted((meta.parent / "simulations").glob("*.json"))
        ]
    out: list[Outcome] = []
    seen: Counter[str] = Counter()
    for sim in sims:
        task = str(sim["task_id"])
        trial = sim.get("trial")
        trial = trial if isinstance(trial, int) else seen[task]
        seen[task] += 1
        info = sim.get("reward_info")
        if not isinstance(info, dict) or sim.get("termination_reason") in (
            "user_error",
            "infrastructure_error",
        ):
            continue
        s = verdict.get((task, trial))
        if s is None:
            continue
        passed = bool(s["passed"])
        out.append(
            Outcome(
                task,
                trial,
                float(info["reward"]),
                passed,
                list(s.get("failed_checks", [])),
                "" if passed else _first_sentence(s),
                why=info,
            )
        )
    return out


def classify(o: Outcome) -> str:
    info = o.why
    db = (info.get("db_check") or {}).get("db_match")
    unmet = [c["info"] for c in info.get("communicate_checks") or [] if not c.get("met")]
    tau_pass = o.reward >= 1.0
    if not tau_pass and o.passed and unmet and db is not False:
        return "τ² also asks what the agent said"
    if tau_pass and not o.passed and set(o.checks) & {"writes_made", "no_extra_write"}:
        return "same database, other writes"
    if not tau_pass and o.passed and db is False:
        return "writes held, database differs"
    return "other"


def report(outcomes: list[Outcome], by_kind: bool, show: int) -> float:
    agree = sum(1 for o in outcomes if (o.reward >= 1.0) == o.passed)
    n = len(outcomes)
    rate = agree / n if n else 0.0
    tau_passes = sum(o.reward >= 1.0 for o in outcomes)
    tg_passes = sum(o.passed for o in outcomes)
    print(
        f"agreement: {agree}/{n} simulations ({rate:.1%}); τ² passes {tau_passes}, "
        f"ToolGate passes {tg_passes}"
    )
    if by_kind:
        rows: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for o in outcomes:
            rows[o.kind][0] += (o.reward >= 1.0) == o.passed
            rows[o.kind][1] += 1
        print("\n| behaviour | agree | simulations |\n|---|--:|--:|")
        for k in BEHAVIOURS:
            if k in rows:
                a, t = rows[k]
                print(f"| {k} | {a / t:.1%} | {t} |")
    differ = [o for o in outcomes if (o.reward >= 1.0) != o.passed]
    if differ:
        counts = Counter(classify(o) for o in differ)
        print("\ndisagreements: " + ", ".join(f"{k}: {v}" for k, v in counts.most_common()))
        for o in differ[:show]:
            side = "τ² pass, ToolGate fail" if o.reward >= 1.0 else "τ² fail, ToolGate pass"
            extra = f" [{o.kind}]" if o.kind else ""
            print(
                f"- task {o.task} trial {o.trial}{extra}: {side} — {classify(o)}"
                + (f": {o.reason}" if o.reason else "")
            )
    return rate


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path, metavar="RESULTS.json")
    ap.add_argument("--writes", help="passed to toolgate import tau2")
    ap.add_argument("--tools", type=Path, help="passed to toolgate import tau2")
    ap.add_argument("--skip-unmappable", action="store_true", help="passed to toolgate import tau2")
    ap.add_argument("--generate", action="store_true", help="measure on generated trajectories")
    ap.add_argument("--tasks", type=int, default=60)
    ap.add_argument("--trials", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--trim", action="store_true", help="write messages as the leaderboard trims them"
    )
    ap.add_argument("--save", type=Path, help="keep the generated results file here")
    ap.add_argument("--keep", type=Path, help="keep the imports here")
    ap.add_argument("--show", type=int, default=20, help="disagreements listed (default 20)")
    a = ap.parse_args(argv)
    if not a.files and not a.generate:
        ap.error("give τ²-bench results files, or --generate")
    extra: list[str] = []
    if a.writes:
        extra += ["--writes", a.writes]
    if a.tools:
        extra += ["--tools", str(a.tools.resolve())]
    if a.skip_unmappable:
        extra.append("--skip-unmappable")
    with tempfile.TemporaryDirectory() as tmp:
        base = a.keep or Path(tmp)
        outcomes: list[Outcome] = []
        if a.generate:
            results, kinds = generate(a.tasks, a.trials, a.seed, a.trim)
            src = a.save or Path(tmp) / "results.json"
            src.write_text(json.dumps(results))
            print(f"generated {len(results['tasks'])} tasks × {a.trials} trials ({src})")
            found = parity(src.resolve(), base / "generated", extra)
            for o in found:
                o.kind = kinds[(o.task, o.trial)]
            outcomes += found
        for i, f in enumerate(a.files):
            outcomes += parity(f.resolve(), base / f"file{i}", extra)
        rate = report(outcomes, a.generate, a.show)
    return 0 if rate >= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
