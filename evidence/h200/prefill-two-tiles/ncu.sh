# H200 call (`bash evidence/h200/prefill-two-tiles/ncu.sh`): Nsight Compute on
# `attn_prefill_mma`'s 64-token form with two row tiles per workgroup (the binary of
# .devbin/new, the generated/ of bc40161): the first 1 × 4096 launch and the first 16 × 512
# launch of `bench-prefill --runs 1` (four launches per shape: three warm-up), the full
# set, and the SASS with its warp-stall samples summed by region (prefill-pingpong/regions.py).
# The body is prefill-ncu/ncu.sh's, line for line (what ran).
. evidence/h200/prefill-ncu/ncu.sh
