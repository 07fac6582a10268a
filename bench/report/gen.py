#!/usr/bin/env python3
"""bench/report/gen.py STACKS FUNCTIONS [SEED] > x.folded

Folded stacks with STACKS unique stacks over FUNCTIONS function names,
shaped like a real program's: a few roots, shared prefixes, depths of 5
to 40, weights skewed so a few stacks are hot.  Deterministic per SEED."""
import random
import sys

stacks = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
nfuncs = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
names = ["App::Module%d::Klass%d#method_%d" % (i % 97, i % 389, i) for i in range(nfuncs)]
names[0] = "<main>"
# Each function calls a handful of others, so stacks share prefixes.
callees = [[rng.randrange(1, nfuncs) for _ in range(rng.randint(2, 12))] for _ in range(nfuncs)]
seen = set()
out = sys.stdout
while len(seen) < stacks:
    depth = rng.randint(5, 40)
    f = 0
    frames = [names[0]]
    for _ in range(depth):
        f = rng.choice(callees[f]) if rng.random() < 0.9 else rng.randrange(1, nfuncs)
        frames.append(names[f])
    s = ";".join(frames)
    if s in seen:
        continue
    seen.add(s)
    w = int(1000000 * rng.paretovariate(1.2))
    out.write("%s %d\n" % (s, w))
