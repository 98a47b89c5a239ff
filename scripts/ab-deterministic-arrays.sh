#!/usr/bin/env bash
# A/B: the deterministic variant's regression since 9069d20. cur = HEAD; A = det arrays at 256 tokens, 8 softmax values; B = A + det K tiles static.
# The generated directories are built beforehand: .devbin/gen-cur = `onekernel gen --out` at 37b9f10, gen-A at 9b96177,
# gen-B = gen-A with sh_ktile static where (!async_k || deterministic) (hand edit, measurement only), gen-base at 9992247;
# .devbin/onekernel is the binary of 9b96177. Run through the device tool with carry [.devbin, .gl].
set -uo pipefail
export BUDGET_S=${BUDGET_S:-540}; source scripts/device-env.sh
log=$OUT/ab.log; mkdir -p $OUT/r
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; exit 0; }
for g in cur A B; do echo "== ptxas $g" >> $log
nvcc -arch=sm_90 -cubin -o /tmp/c.cubin --resource-usage .devbin/gen-$g/cuda/attn_decode_chunk.cu 2>&1 | grep -E "Function properties|registers|spill|smem|error" | sed 's/^ptxas info *: //' | paste - - - | sed 's/Function properties for //' | grep -E 'paged_true.*async_k_true|error' >> $log; done
for g in A B; do echo "== validate $g $(date +%T)" >> $log
timeout 100 .devbin/onekernel validate --backend all --kernel attn_decode_chunk --kernel attn_decode_combine --out .devbin/gen-$g > $OUT/r/validate-$g.log 2>&1; echo "rc $?" >> $log
grep -c " ok " $OUT/r/validate-$g.log >> $log; grep -v " ok " $OUT/r/validate-$g.log | grep -v SKIPPED | tail -4 >> $log; done
S="--shape 1x4096 --shape 1x32768 --shape 16x4096 --shape 128x8192"
run() { name=$1; shift; [ $(left) -lt 70 ] && return; echo "== $name $(date +%T)" >> $log; mkdir -p $OUT/r/$name; timeout 65 .devbin/onekernel bench "$@" --evidence $OUT/r/$name 2>&1 | grep -E '^\| [0-9]' >> $log; }
run cur --backend cuda --out .devbin/gen-cur $S
run A --backend cuda --out .devbin/gen-A $S
run B --backend cuda --out .devbin/gen-B $S
run base --backend cuda --out .devbin/gen-base --fast-chunk 256 $S
run B2 --backend cuda --out .devbin/gen-B $S
run A2 --backend cuda --out .devbin/gen-A $S
run cur2 --backend cuda --out .devbin/gen-cur $S
run Bvk --backend cuda,vulkan --out .devbin/gen-B $S
echo "done $(date +%T)" >> $log
finish
