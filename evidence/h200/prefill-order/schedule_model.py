# The list-schedule model behind the start order (not a measurement): workgroups take
# their query block's K/V blocks plus a fixed 4.5 units each, 264 slots (two per SM on
# the H200) take them in start order as they free up. Prints the modelled step for the
# old order (query block fastest, then head, then sequence) and for heads fastest
# (each sequence's blocks heaviest first across its heads).
import heapq

def makespan(order, slots=264):
    h = [0.0] * slots
    for w in order:
        heapq.heappush(h, heapq.heappop(h) + w)
    return max(h)

def model(seqs, heads=32, fixed=4.5):
    def work(kv, tq, qb):
        return (kv - tq + min(qb * 64 + 63, tq - 1)) // 64 + 1 + fixed
    nqb = max((tq + 63) // 64 for _, tq in seqs)
    old = [work(kv, tq, nqb - 1 - x) for kv, tq in seqs for h in range(heads) for x in range(nqb) if (nqb - 1 - x) * 64 < tq]
    new = [work(kv, tq, nqb - 1 - y) for kv, tq in seqs for y in range(nqb) if (nqb - 1 - y) * 64 < tq for h in range(heads)]
    return makespan(old), makespan(new), sum(old) / 264

for label, seqs in [("1 x 4096", [(4096, 4096)]), ("4 x 2048", [(2048, 2048)] * 4), ("16 x 512", [(512, 512)] * 16),
                    ("varlen mix", [(3000, 3000), (2148, 100), (700, 700), (1456, 1200)])]:
    old, new, ideal = model(seqs)
    print(f"{label:11s} old {old:6.1f}  heads fastest {new:6.1f}  ({100 * (old - new) / old:4.1f} %)  work / slots {ideal:6.1f}")
