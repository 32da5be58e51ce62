"""Maximum bipartite matching of expected calls to actual calls (Hopcroft–Karp).

Pairing expected with actual calls is a *maximum* matching, never first-match-wins
(seed 000): an expectation without arguments matches any call of its name, and letting
it take the first such call could steal the very call a more specific expectation needs,
reporting a miss although a pairing satisfying both exists.

:func:`hopcroft_karp` takes the bipartite graph as adjacency lists (expected index →
the actual indices it may pair with, in ascending order) and returns, for every expected
index, its actual partner or -1. It runs in O(E·√V); with the handful of calls a case
has, the greedy pre-pass usually finds the maximum and the phases end at once.
The result is deterministic: lower indices are tried first everywhere.

:func:`greedy_matching` is the first-match-wins pairing the maximum is compared against
(property tests assert the maximum is never smaller).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

_INF = 1 << 30


def greedy_matching(adj: Sequence[Sequence[int]], n_right: int) -> list[int]:
    """First-match-wins: each expected call in order takes its first free actual call."""
    used = [False] * n_right
    out = [-1] * len(adj)
    for u, vs in enumerate(adj):
        for v in vs:
            if not used[v]:
                used[v] = True
                out[u] = v
                break
    return out


def hopcroft_karp(adj: Sequence[Sequence[int]], n_right: int) -> list[int]:
    """A maximum matching: ``match[u]`` is the right vertex paired with left vertex ``u``
    (expected call → actual call), or -1.

    Layered BFS from the free left vertices, then vertex-disjoint shortest augmenting
    paths by DFS, repeated until no augmenting path is left (Hopcroft & Karp, 1973).
    """
    n_left = len(adj)
    match_l = greedy_matching(adj, n_right)
    match_r = [-1] * n_right
    free = 0
    for u, v in enumerate(match_l):
        if v >= 0:
            match_r[v] = u
        else:
            free += 1
    if free == 0:
        return match_l
    dist = [0] * n_left
    while True:
        # BFS: layer the graph from every free left vertex.
        queue: deque[int] = deque()
        for u in range(n_left):
            if match_l[u] < 0:
                dist[u] = 0
                queue.append(u)
            else:
                dist[u] = _INF
        found = False
        while queue:
            u = queue.popleft()
            for v in adj[u]:
                w = match_r[v]
                if w < 0:
                    found = True
                elif dist[w] == _INF:
                    dist[w] = dist[u] + 1
                    queue.append(w)
        if not found:
            return match_l
        # DFS: augment along vertex-disjoint shortest paths.
        for u in range(n_left):
            if match_l[u] < 0:
                _augment(u, adj, match_l, match_r, dist)


def _augment(
    u: int, adj: Sequence[Sequence[int]], match_l: list[int], match_r: list[int], dist: list[int]
) -> bool:
    # Iterative DFS (no recursion limit): stack of (vertex, next edge index).
    stack: list[tuple[int, int]] = [(u, 0)]
    path: list[tuple[int, int]] = []  # (left vertex, right vertex) edges taken
    while stack:
        x, i = stack[-1]
        edges = adj[x]
        if i >= len(edges):
            dist[x] = _INF  # dead end: never revisit in this phase
            stack.pop()
            if path:
                path.pop()
            continue
        stack[-1] = (x, i + 1)
        v = edges[i]
        w = match_r[v]
        if w < 0:
            path.append((x, v))
            for lx, rv in path:
                match_l[lx] = rv
                match_r[rv] = lx
            return True
        if dist[w] == dist[x] + 1:
            path.append((x, v))
            stack.append((w, 0))
    return False


def matching_size(match: Sequence[int]) -> int:
    return sum(1 for v in match if v >= 0)
