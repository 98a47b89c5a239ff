import sys, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    if not line.startswith('P '): continue
    f = line.split()
    fin, L, x, y, z, sm, t0, tf, t1, ta, t2 = map(int, f[1:])
    rows[(fin, L)].append((x, y, z, sm, t0, tf, t1, ta, t2))
def pct(v, ps=(0, 10, 50, 90, 100)):
    v = sorted(v); return ' '.join('%.1f' % v[min(len(v)-1, int(p/100*(len(v)-1)+0.5))] for p in ps)
for key in sorted(rows):
    r = rows[key]
    if key[1] not in (3, 5): continue
    base = min(w[4] for w in r)
    us = lambda t: (t - base) / 1000.0
    print('fin %d launch %d: %d workgroups, span %.1f us' % (key[0], key[1], len(r), us(max(w[8] for w in r))))
    print('  start           p0/10/50/90/100:', pct([us(w[4]) for w in r]))
    print('  first data - st               :', pct([(w[5]-w[4])/1000 for w in r if w[5]]))
    print('  loop end                      :', pct([us(w[6]) for w in r]))
    print('  loop (first data .. loop end) :', pct([(w[6]-w[5])/1000 for w in r if w[5]]))
    print('  end - loop end                :', pct([(w[8]-w[6])/1000 for w in r]))
    print('  end                           :', pct([us(w[8]) for w in r]))
    m = [w for w in r if w[7]]
    if m: print('  arrive..end (merging wgs)     :', pct([(w[8]-w[7])/1000 for w in m]), 'n', len(m))
    sms = collections.Counter(w[3] for w in r); print('  SMs used %d, max wgs on one SM %d' % (len(sms), max(sms.values())))
    # per-SM: when was the SM fully idle at the end
    last = collections.defaultdict(int)
    for w in r: last[w[3]] = max(last[w[3]], w[8])
    print('  SM last end                   :', pct([us(t) for t in last.values()]))
