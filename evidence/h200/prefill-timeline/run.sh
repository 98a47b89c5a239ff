# Per-workgroup timelines of attn_prefill_mma (H200), one device call each: make.py writes
# a probe copy of generated/ (the CUDA of the paged 64-token form stamps %globaltimer at
# entry, after the grid dependency wait, after the Q tile's loop, at the first barrier,
# when the first block has arrived, at the end of the block loop and at the end, and
# prints them for the first launch of the 16 × 512 and 1 × 4096 grids); bench-prefill runs
# it once; parse.py summarizes. The printing slows the launches (spans of 4–8 ms), so only
# the phases before the block loop and the first wave's figures are read from it.
# timeline-converting-loop.txt: a step between the parent and the loads-first change, not
# committed: the Q loop unrolled (34 steps of fixed count) but still converting each pair
# of values as it arrived, which ran the bench 1.5–2.3 % faster than the parent's strided
# loop (CUDA, one call); timeline.txt: the loads-first kernel of this commit.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
mkdir -p /tmp/b /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; chmod +x /tmp/b/*
E=/tmp/ev; K=/tmp/b/onekernel
python3 evidence/h200/prefill-timeline/make.py generated /tmp/pg
$K bench-prefill --backend cuda --runs 1 --out /tmp/pg > $E/probe.md 2> $E/probe.log
python3 evidence/h200/prefill-timeline/parse.py $E/probe.md > $E/timeline.txt
tar czf $OUT/ev.tgz -C /tmp ev
