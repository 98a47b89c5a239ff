# Summarize make.py's probe lines (stdout of a bench-prefill run on its copy): per grid,
# the phases of each workgroup (µs), and how many workgroups ran at once.
# Fields after "P": slot x y z sm entry q_ready first_block loop_end end after_wait q_loop_end.
import sys, statistics as S
rows = {}
for line in open(sys.argv[1], errors='replace'):
    f = line.split()
    if len(f) == 13 and f[0] == 'P':
        v = [int(x) for x in f[1:]]
        rows.setdefault(v[0], []).append(dict(x=v[1], sm=v[4], t0=v[5], tq=v[6], tf=v[7], tl=v[8], te=v[9], tw=v[10], tc=v[11]))
def pct(v):
    v = sorted(v); return '%7.2f / %7.2f / %7.2f / %7.2f' % (v[0], v[len(v) // 2], v[int(len(v) * 0.9)], v[-1])
for slot, rs in sorted(rows.items()):
    name = {0: '16 x 512 (grid z 16)', 1: '1 x 4096 (grid x 64)'}[slot]
    t00 = min(r['t0'] for r in rs); tend = max(r['te'] for r in rs)
    gx = max(r['x'] for r in rs) + 1
    print(f'{name}: {len(rs)} workgroups, launch span {(tend - t00) / 1e3:.1f} us')
    print('  phase (us)                     min /  median /     p90 /     max')
    print('  entry -> grid dependency wait ', pct([(r['tw'] - r['t0']) / 1e3 for r in rs]))
    print('  wait -> Q loop done           ', pct([(r['tc'] - r['tw']) / 1e3 for r in rs]))
    print('  Q loop -> cells, barrier      ', pct([(r['tq'] - r['tc']) / 1e3 for r in rs]))
    print('  barrier -> first block        ', pct([(r['tf'] - r['tq']) / 1e3 for r in rs if r['tf']]))
    print('  loop (first -> end)           ', pct([(r['tl'] - r['tf']) / 1e3 for r in rs if r['tf']]))
    print('  epilogue                      ', pct([(r['te'] - r['tl']) / 1e3 for r in rs]))
    print('  whole workgroup               ', pct([(r['te'] - r['t0']) / 1e3 for r in rs]))
    per = [(r['tl'] - r['tf']) / 1e3 / (gx - 1 - r['x']) for r in rs if r['tf'] and gx - 1 - r['x'] >= 1]
    print('  loop per block after the first', pct(per))
    ev = sorted([(r['t0'], 1) for r in rs] + [(r['te'], -1) for r in rs]); cur = best = 0; area = 0; last = ev[0][0]
    for t, d in ev:
        area += cur * (t - last); last = t; cur += d; best = max(best, cur)
    print(f'  workgroups at once: max {best}, mean {area / (tend - t00):.1f}')
