# The kernel and its runtime form are in a39c1ac (reverted after these calls): build that commit to rerun.
# H200 call (`bash evidence/h200/prefill-pingpong/ncu.sh`, ncu/): Nsight Compute on the first
# 1 × 4096 launch of `attn_prefill_pingpong` and of `attn_prefill_mma`'s 64-token form
# (bench-prefill, one run each): the full set, and the SASS with its warp-stall samples.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
rm -rf /tmp/b /tmp/ev; mkdir -p /tmp/b /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; chmod +x /tmp/b/*
E=/tmp/ev; K=/tmp/b/onekernel
timeout 400 ncu --set full --import-source no -k regex:attn_prefill_ --launch-count 2 -o $E/prof $K bench-prefill --backend cuda --runs 1 > $E/ncu-run.log 2>&1; echo "ncu exit $?"; tail -3 $E/ncu-run.log
ncu -i $E/prof.ncu-rep --page details --print-details all > $E/details.txt 2>&1
grep -E "attn_prefill|Duration|Registers Per|Achieved Occupancy|Issue Slots Busy|Eligible Warps|Active Warps Per|No Eligible|Tensor|One or More|Warp Cycles Per Issued" $E/details.txt | head -60
ncu -i $E/prof.ncu-rep --page raw --csv --metrics smsp__pcsamp_warps_issue_stalled_barrier,smsp__pcsamp_warps_issue_stalled_long_scoreboard,smsp__pcsamp_warps_issue_stalled_short_scoreboard,smsp__pcsamp_warps_issue_stalled_wait,smsp__pcsamp_warps_issue_stalled_math_pipe_throttle,smsp__pcsamp_warps_issue_stalled_mio_throttle,smsp__pcsamp_warps_issue_stalled_selected,smsp__pcsamp_warps_issue_stalled_not_selected,smsp__pcsamp_warps_issue_stalled_dispatch_stall,smsp__pcsamp_warps_issue_stalled_lg_throttle,smsp__pcsamp_warps_issue_stalled_membar,smsp__pcsamp_warps_issue_stalled_sleeping,smsp__pcsamp_warps_issue_stalled_branch_resolving,smsp__pcsamp_warps_issue_stalled_no_instructions,smsp__pcsamp_warps_issue_stalled_drain,smsp__pcsamp_warps_issue_stalled_imc_miss,smsp__pcsamp_warps_issue_stalled_misc,smsp__pcsamp_warps_issue_stalled_tex_throttle > $E/stalls.csv 2>&1; cat $E/stalls.csv | head -5
ncu -i $E/prof.ncu-rep --page source --csv --print-source sass > $E/sass-source.csv 2>&1; wc -l $E/sass-source.csv; head -2 $E/sass-source.csv | cut -c1-600
tar czf $OUT/ev.tgz -C /tmp ev
