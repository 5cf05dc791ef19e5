"""The FCFS-ordered wait queue and the min-heap of running jobs, on the state arrays."""

from __future__ import annotations

from schedrl.jit import njit

from schedrl.sim.state import HEAP_LEN, Q_LEN, SEQ


@njit
def _before(s, a, b):
    # FCFS order: submit time, then trace position (requeued jobs return to their place)
    return s.submit[a] < s.submit[b] or (s.submit[a] == s.submit[b] and a < b)


@njit
def queue_insert(s, j):
    pos = s.iv[Q_LEN]
    while pos > 0 and _before(s, j, s.queue[pos - 1]):
        s.queue[pos] = s.queue[pos - 1]
        pos -= 1
    s.queue[pos] = j
    s.iv[Q_LEN] += 1


@njit
def queue_position(s, j):
    for k in range(s.iv[Q_LEN]):
        if s.queue[k] == j:
            return k
    return -1


@njit
def queue_remove(s, j):
    q = s.iv[Q_LEN]
    k = queue_position(s, j)
    for m in range(k, q - 1):
        s.queue[m] = s.queue[m + 1]
    s.iv[Q_LEN] = q - 1


@njit
def _heap_less(s, a, b):
    # running jobs end in (end time, start order): ties keep the order in which jobs started
    return s.heap_t[a] < s.heap_t[b] or (s.heap_t[a] == s.heap_t[b] and s.heap_s[a] < s.heap_s[b])


@njit
def _heap_swap(s, a, b):
    s.heap_t[a], s.heap_t[b] = s.heap_t[b], s.heap_t[a]
    s.heap_s[a], s.heap_s[b] = s.heap_s[b], s.heap_s[a]
    s.heap_j[a], s.heap_j[b] = s.heap_j[b], s.heap_j[a]


@njit
def _sift_up(s, i):
    while i > 0:
        parent = (i - 1) // 2
        if not _heap_less(s, i, parent):
            break
        _heap_swap(s, i, parent)
        i = parent


@njit
def _sift_down(s, i):
    n = s.iv[HEAP_LEN]
    while True:
        smallest = i
        left = 2 * i + 1
        right = left + 1
        if left < n and _heap_less(s, left, smallest):
            smallest = left
        if right < n and _heap_less(s, right, smallest):
            smallest = right
        if smallest == i:
            return
        _heap_swap(s, i, smallest)
        i = smallest


@njit
def heap_push(s, t, j):
    i = s.iv[HEAP_LEN]
    s.heap_t[i] = t
    s.heap_s[i] = s.iv[SEQ]
    s.heap_j[i] = j
    s.iv[SEQ] += 1
    s.iv[HEAP_LEN] = i + 1
    _sift_up(s, i)


@njit
def heap_pop(s):
    j = s.heap_j[0]
    last = s.iv[HEAP_LEN] - 1
    s.iv[HEAP_LEN] = last
    if last > 0:
        _heap_swap(s, 0, last)
        _sift_down(s, 0)
    return j


@njit
def heap_remove(s, j):
    n = s.iv[HEAP_LEN]
    for i in range(n):
        if s.heap_j[i] == j:
            last = n - 1
            s.iv[HEAP_LEN] = last
            if i != last:
                _heap_swap(s, i, last)
                _sift_down(s, i)
                _sift_up(s, i)
            return True
    return False
