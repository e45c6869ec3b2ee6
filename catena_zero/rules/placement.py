"""Placing stones: the incremental heart of the batched engine (see engine.py).

Legality is monotone, so after a placement at x only these cells can turn illegal: x itself;
the cells around x (their degree grew, and x may be interior); the cells around the stones
beside x that became interior; the (at most two) cells beside both ends of the new ribbon.
Each stone keeps `free`, its number of legal neighbours: a ribbon is limited when both ends
have none. Only the new ribbon and ribbons with an end beside a cell that just turned illegal
can become limited, so no step scans the board.
"""

from __future__ import annotations

import functools

import numpy as np

from catena_zero.rules.board import BLACK, EMPTY, opponent
from catena_zero.rules.state import GameState


@functools.cache
def common_neighbour_tables(board) -> tuple[np.ndarray, np.ndarray]:
    """Two flat tables over pairs (p, q) -> p * (C+1) + q: the common neighbours of two
    distinct cells (at most two on a hex grid), the sentinel C where fewer (or p == q)."""
    width = board.num_cells + 1
    neighbours = board.neighbours_padded  # [C+1, 6]
    shared = board.adjacency[neighbours]  # [C+1 (p), 6, C+1 (q)]: neighbour k of p touches q
    shared &= neighbours[:, :, None] < board.num_cells
    count = shared.sum(1)  # [C+1, C+1]
    np.fill_diagonal(count, 0)
    first = neighbours[np.arange(width)[:, None], shared.argmax(1)]
    second = neighbours[np.arange(width)[:, None], 5 - shared[:, ::-1].argmax(1)]
    first = np.where(count >= 1, first, board.num_cells)
    second = np.where(count == 2, second, board.num_cells)
    np.fill_diagonal(first, board.num_cells)
    np.fill_diagonal(second, board.num_cells)
    assert count.max() <= 2
    # int16 keeps the tables small enough to stay in cache.
    return first.ravel().astype(np.int16), second.ravel().astype(np.int16)


_DIRECTION_BITS = (1 << np.arange(6, dtype=np.uint8))[:, None]  # [6, 1] bit of each direction


@functools.cache
def stone_neighbour_tables(board) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tables over (cell, pattern) -> cell * 64 + pattern, where bit k of the pattern says
    that neighbour k (board direction order) holds a stone: the smallest and the largest
    such neighbour (the sentinel C when none, and the largest also when fewer than two),
    and, over patterns alone, the number of bits set. One gather replaces several
    reductions over the six directions."""
    width = board.num_cells + 1
    neighbours = board.neighbours_padded  # [C+1, 6]
    patterns = np.arange(64)
    bits = (patterns[:, None] >> np.arange(6)) & 1  # [64, 6]
    count = bits.sum(1)  # [64]
    chosen = bits[None, :, :].astype(bool)  # [1, 64, 6]
    cells = neighbours[:, None, :]  # [C+1, 1, 6]
    smallest = np.where(chosen, cells, board.num_cells).min(2)  # [C+1, 64]
    largest = np.where(chosen, cells, -1).max(2)
    largest = np.where(largest > smallest, largest, board.num_cells)
    assert smallest.shape == (width, 64)
    return smallest.ravel().astype(np.intp), largest.ravel().astype(np.intp), count.astype(np.uint8)


def place_stones(engine, state: GameState, rows, cells, colours):
    """Put stones (colours [P]) on cells [P] of the increasing games rows [P]: stones,
    degrees, ribbons, legality, legal_count and free counts; no claims. Returns the
    ribbons that just became limited as (games [K], roots [K], tie colours [K]); a ribbon
    may be listed more than once."""
    width = engine._width
    sentinel = engine.num_cells
    count_p = rows.shape[0]
    base = rows * width  # [P] flat offset of each game's row
    stones = state.stones_padded.ravel()
    degree = state.degree_padded.ravel()
    legal = state.legal_padded.ravel()
    label = state.label.ravel()
    free = state.free.ravel()
    length = state.ribbon_length.ravel()
    black = state.ribbon_black.ravel()
    end0 = state.ribbon_end0.ravel()
    end1 = state.ribbon_end1.ravel()
    neighbours_t = engine._neighbours_t

    around = np.take(neighbours_t, cells, axis=1)  # [6, P] cells around x
    around_flat = around + base  # [6, P]
    has_stone = stones[around_flat] != EMPTY  # [6, P]
    # (np.packbits along the short axis is several times slower than this weighted sum.)
    pattern = (has_stone.view(np.uint8) * _DIRECTION_BITS).sum(0, dtype=np.uint8)  # [P]
    smallest, largest, bit_count = engine._stone_neighbour_tables
    count = bit_count[pattern]  # [P] 0..2 by legality
    x_flat = base + cells
    stones[x_flat] = colours
    around_degree = degree[around_flat] + 1  # [6, P]
    degree[around_flat] = around_degree
    degree[base + sentinel] = 0
    degree[x_flat] = count

    # The (up to two) stone neighbours a < c of x; the sentinel where missing.
    pattern_flat = cells * 64 + pattern
    a = smallest[pattern_flat]
    c = largest[pattern_flat]
    a_flat = base + a
    c_flat = base + c
    root_a_flat = base + label[a_flat]
    root_c_flat = base + label[c_flat]
    length_a = length[root_a_flat]
    length_c = length[root_c_flat]
    # The far end of a's ribbon seen from a (a itself for a single stone); for the
    # sentinel ribbon this is the sentinel.
    end0_a = end0[root_a_flat]
    end1_a = end1[root_a_flat]
    far_a = np.where(end0_a == a, end1_a, end0_a)
    end0_c = end0[root_c_flat]
    end1_c = end1[root_c_flat]
    far_c = np.where(end0_c == c, end1_c, end0_c)
    has_a = count >= 1
    has_c = count == 2
    new_end0 = np.where(has_a, far_a, cells)
    new_end1 = np.where(has_c, far_c, cells)
    keep_a = length_a >= length_c
    keep_flat = np.where(has_a, np.where(keep_a, root_a_flat, root_c_flat), x_flat)
    keep = keep_flat - base
    length[keep_flat] = length_a + length_c + 1
    black[keep_flat] = black[root_a_flat] + black[root_c_flat] + (colours == BLACK)
    end0[keep_flat] = new_end0
    end1[keep_flat] = new_end1
    label[x_flat] = keep
    join = has_c.nonzero()[0]
    if join.size:
        # The shorter ribbon takes the kept label. With at most two stones they are its two
        # ends; longer ones are found by scanning their games' rows.
        drop_c = keep_a[join]
        join_base = base[join]
        join_keep = keep[join]
        short = np.where(drop_c, length_c[join], length_a[join]) <= 2
        few = short.nonzero()[0]
        if few.size:
            for end_a, end_c in ((end0_a, end0_c), (end1_a, end1_c)):
                end = np.where(drop_c, end_c[join], end_a[join])[few]
                label[join_base[few] + end] = join_keep[few]
        scan = (~short).nonzero()[0]
        if scan.size:
            drop = np.where(drop_c, root_c_flat[join], root_a_flat[join])[scan] - join_base[scan]
            hits = (state.label[rows[join[scan]]] == drop[:, None]).ravel().nonzero()[0]
            which = hits // width
            label[join_base[scan][which] + (hits - which * width)] = join_keep[scan][which]

    # Legality. Cells around x: a third stone neighbour, or x interior.
    old = legal[around_flat]
    new = old & (around_degree <= 2) & (count < 2)
    legal[around_flat] = new
    flipped_around = old & ~new  # [6, P]
    legal[x_flat] = False
    # x starts with the cells around it that were legal; then every cell that turns
    # illegal costs each of its stone neighbours one (x itself costs a and c one).
    free[x_flat] = old.view(np.uint8).sum(0, dtype=np.uint8)
    flat = flipped_around.ravel().nonzero()[0]
    flipped_cells = [around.ravel()[flat]]
    flipped_owner = [flat % count_p]
    decrements = [a_flat[has_a], c_flat[has_c]]
    # Stone neighbours of x that became interior block every cell around them (one
    # stone at a time: a cell beside both must be counted once).
    for stone_flat, stone, present in ((a_flat, a, has_a), (c_flat, c, has_c)):
        interior = (present & (degree[stone_flat] >= 2)).nonzero()[0]
        if interior.size:
            blocked = np.take(neighbours_t, stone[interior], axis=1)  # [6, I]
            blocked_flat = blocked + base[interior]
            old = legal[blocked_flat]
            legal[blocked_flat] = False
            flat = old.ravel().nonzero()[0]
            flipped_cells.append(blocked.ravel()[flat])
            flipped_owner.append(interior[flat % interior.size])
    # A cell beside both ends of the new ribbon would close a ring (at most two such
    # cells, from a table); its only stone neighbours are those two ends.
    pair = new_end0 * width + new_end1
    shut_owner = []
    for table in engine._common_neighbours:
        closing = base + table[pair]
        shut = legal[closing]
        legal[closing] = False
        hit = shut.nonzero()[0]
        if hit.size:
            shut_owner.append(hit)
            decrements += [base[hit] + new_end0[hit], base[hit] + new_end1[hit]]
    # Cells lost per game: x and every flipped cell (one count over their owners is cheaper
    # than summing each group of cells apart).
    lost = np.bincount(np.concatenate(flipped_owner + shut_owner), minlength=count_p)
    lost += 1
    if count_p == state.batch_size:
        state.legal_count -= lost
    else:
        state.legal_count[rows] -= lost

    # Stone neighbours of the other flipped cells.
    owner = np.concatenate(flipped_owner)  # [F] index into rows
    near = np.take(engine._neighbours, np.concatenate(flipped_cells), axis=0)  # [F, 6]
    near += base[owner, None]
    hits = (stones[near] != EMPTY).ravel().nonzero()[0]
    touched = near.ravel()[hits]  # [T] flat stones that lost a legal neighbour
    toucher = owner[hits // 6]  # [T]
    decrements.append(touched)
    decrement = np.concatenate(decrements)
    np.subtract.at(free, decrement, np.int8(1))

    # The new ribbon is limited when both ends are shut; another ribbon when the stone
    # that just lost a neighbour has none left and neither has its other end.
    shut_new = (free[base + new_end0] == 0) & (free[base + new_end1] == 0)
    new_ribbon = shut_new.nonzero()[0]
    games = [rows[new_ribbon]]
    roots = [keep[new_ribbon]]
    ties = [opponent(colours[new_ribbon])]
    root_flat = base[toucher] + label[touched]
    candidate = ((free[touched] == 0) & (root_flat != keep_flat[toucher])).nonzero()[0]
    if candidate.size:
        touched, toucher = touched[candidate], toucher[candidate]
        root_flat = root_flat[candidate]
        game_base = base[toucher]
        end = touched - game_base
        first_end = end0[root_flat]
        far = np.where(first_end == end, end1[root_flat], first_end)
        limited = (free[game_base + far] == 0).nonzero()[0]
        games.append(rows[toucher[limited]])
        roots.append(root_flat[limited] - game_base[limited])
        ties.append(opponent(colours[toucher[limited]]))
    return np.concatenate(games), np.concatenate(roots), np.concatenate(ties)
