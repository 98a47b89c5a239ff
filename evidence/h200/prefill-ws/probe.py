# Timing probe of a warp-specialized attn_prefill_mma (the 64-token form): a hand-edited
# copy of generated/ in which a third warpgroup (invocations 256-383) copies the K/V
# blocks and the two computing warpgroups only wait for them, as cuDNN's and
# FlashAttention-3's prefill kernels are built (docs/PERFORMANCE.md, "What cuDNN runs").
#   * three 34 KiB buffers (the `sc` scratch, unused on CUDA, is the third), each with a
#     "full" mbarrier (128 arrivals: every copying invocation, after its copies of the
#     block have landed, `cp.async.wait_group` + `fence.proxy.async`, as FlashAttention-3's
#     paged copies do) and an "empty" one (256 arrivals: every computing invocation once
#     the block's `P · V` has completed);
#   * register budgets by `setmaxnreg`: the copying warpgroup 40, the computing ones 232
#     (launch bounds 384 × 1: 168 at launch);
#   * the computing warpgroups keep the kernel's Q loads, products, softmax and epilogue;
#     no workgroup barrier in the block loop.
# Each pair of copying invocations copies one row of a block (invocation p: row p / 2,
# chunks 8 (p mod 2) ... + 7), which Nsight Compute found uncoalesced (47 % of the L2
# sectors excessive) and in shared-memory bank conflicts, unlike the kernel's copies (a
# warp: two whole rows per instruction); docs/PERFORMANCE.md, "A copying warpgroup,
# measured".
# variants: ws (the above); ws2 (two buffers, each block's copies waited for before the
# next is issued); wsp (ws with each page read a block ahead); wsn (the copies' arrivals
# by the hardware, `cp.async.mbarrier.arrive.noinc`, pages a block ahead); wsn4 (wsn with
# four buffers); wsb (wsn, the copying warps sleeping 64 ns between polls of an "empty"
# barrier); wsb1 (wsb with one copying warp).
# usage: python3 probe.py GENERATED_DIR OUT_PREFIX  -> OUT_PREFIX-<variant>/
import sys, re, os, json
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from probe_edit import write_probe

HELPERS = r'''
// Warp specialization (probe): mbarriers and register budgets.
static __device__ __forceinline__ unsigned int ok_smem(const void* p) { return (unsigned int)__cvta_generic_to_shared(p); }
static __device__ __forceinline__ void ok_mbar_init(unsigned long long* b, unsigned int n) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(ok_smem(b)), "r"(n) : "memory");
}
static __device__ __forceinline__ void ok_mbar_arrive(unsigned long long* b) {
    asm volatile("{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [%0]; }" :: "r"(ok_smem(b)) : "memory");
}
static __device__ __forceinline__ void ok_mbar_wait(unsigned long long* b, unsigned int parity) {
    unsigned int done;
    do {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(ok_smem(b)), "r"(parity) : "memory");
    } while (!done);
}
static __device__ __forceinline__ void ok_mbar_wait_sleep(unsigned long long* b, unsigned int parity) {
    unsigned int done;
    for (;;) {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(ok_smem(b)), "r"(parity) : "memory");
        if (done) { break; }
        __nanosleep(64);
    }
}
static __device__ __forceinline__ unsigned int ok_page(const int* __restrict__ bt, unsigned int logical, bool paged) {
    return paged ? (unsigned int)bt[logical] : logical;
}
static __device__ __forceinline__ void ok_fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
'''


# One copying warp (the warpgroup's other three leave after giving up their registers):
# each lane copies two rows (p and p + 32) of every block, all sixteen 16-byte chunks of
# each, pages a block ahead, arrivals by the hardware (`.noinc`, 32 per phase).
ONE_WARP = r"""    if (kv64 && t0_1 >= 256u) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        const unsigned int p = t0_1 - 256u;
        if (p >= 32u) { return; }
        unsigned int pn[2];
        for (unsigned int r = 0u; r < 2u; r++) { pn[r] = ok_page(block_table, b_0 * pc.pages_per_seq + ok_min_u32(p + 32u * r, len_7 - 1u) / page_size, paged); }
        for (unsigned int st = 0u; st < nblk_14; st++) {
            const unsigned int s = st % {S}u;
            unsigned int pg[2];
            for (unsigned int r = 0u; r < 2u; r++) {
                pg[r] = pn[r];
                if (st + 1u < nblk_14) { pn[r] = ok_page(block_table, b_0 * pc.pages_per_seq + ok_min_u32((st + 1u) * 64u + p + 32u * r, len_7 - 1u) / page_size, paged); }
            }
            if (st >= {S}u) { {WAIT}(&ok_bar[{S}u + s], ((st / {S}u) - 1u) & 1u); }
            const unsigned int buf = s * 8704u;
            #pragma unroll
            for (unsigned int r = 0u; r < 2u; r++) {
                const unsigned int row = p + 32u * r;
                const unsigned int tok = ok_min_u32(st * 64u + row, len_7 - 1u);
                const unsigned int src = ((pg[r] * page_size + tok % page_size) * pc.n_kv_heads + kvh_8) * 64u;
                #pragma unroll
                for (unsigned int quad = 0u; quad < 16u; quad++) {
                    ok_async_copy16_past_l1(&sh_kv[buf + ok_panel_word_u32(row, quad, 64u)], &k[src + quad * 4u]);
                    ok_async_copy16_past_l1(&sh_kv[buf + 4352u + ok_panel_word_u32(row, quad, 64u)], &v[src + quad * 4u]);
                }
            }
            asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" :: "r"(ok_smem(&ok_bar[s])) : "memory");
        }
        ok_async_wait<0>();
        return;
    }
    if (kv64) { asm volatile("setmaxnreg.inc.sync.aligned.u32 232;"); }
"""


# `wsr`: the copying warpgroup copies as the kernel's warps do (invocation p: chunk p mod
# 16 of rows p / 16 + 8j, j = 0 ... 7, so that one instruction of a warp reads two whole
# rows and eight invocations' chunks fall on distinct banks), each invocation finding
# its rows' pages itself; one arrival per warp (lane 0, after `__syncwarp`) on both
# barriers (4 and 8 per phase), and lane 0 alone polls them. Not timed yet.
ROWS = r"""    if (kv64 && t0_1 >= 256u) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        const unsigned int p = t0_1 - 256u, quad = p % 16u, lane = p & 31u;
        for (unsigned int st = 0u; st < nblk_14; st++) {
            const unsigned int s = st % {S}u;
            if (st >= {S}u) {
                if (lane == 0u) { ok_mbar_wait(&ok_bar[{S}u + s], ((st / {S}u) - 1u) & 1u); }
                __syncwarp();
            }
            const unsigned int buf = s * 8704u;
            #pragma unroll
            for (unsigned int j = 0u; j < 8u; j++) {
                const unsigned int row = p / 16u + 8u * j;
                const unsigned int tok = ok_min_u32(st * 64u + row, len_7 - 1u);
                const unsigned int page = ok_page(block_table, b_0 * pc.pages_per_seq + tok / page_size, paged);
                const unsigned int src = ((page * page_size + tok % page_size) * pc.n_kv_heads + kvh_8) * 64u + quad * 4u;
                ok_async_copy16_past_l1(&sh_kv[buf + ok_panel_word_u32(row, quad, 64u)], &k[src]);
                ok_async_copy16_past_l1(&sh_kv[buf + 4352u + ok_panel_word_u32(row, quad, 64u)], &v[src]);
            }
            ok_async_commit();
            if (st >= 1u) {
                ok_async_wait<1>(); ok_fence_proxy_async(); __syncwarp();
                if (lane == 0u) { ok_mbar_arrive(&ok_bar[(st - 1u) % {S}u]); }
            }
        }
        ok_async_wait<0>(); ok_fence_proxy_async(); __syncwarp();
        if (lane == 0u) { ok_mbar_arrive(&ok_bar[(nblk_14 - 1u) % {S}u]); }
        return;
    }
    if (kv64) { asm volatile("setmaxnreg.inc.sync.aligned.u32 232;"); }
"""


def make(stages, noinc=False, ahead=False, backoff=False, one_warp=False, rows=False):
    S = str(stages)
    # With three buffers a block's "full" arrival waits until the next block's copies
    # are issued (one block in flight behind the one landing); with two that would wait
    # on the consumers' release of the block the consumers are about to wait for
    # (a deadlock), so each block's copies are waited for before the next is issued.
    if noinc:
        # Each copy's arrival by the hardware when it lands (`cp.async.mbarrier.arrive.noinc`):
        # the copying warpgroup never waits for its copies; the computing ones order them
        # before `wgmma`'s reads with their own `fence.proxy.async` after the wait.
        LAG = f'asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" :: "r"(ok_smem(&ok_bar[s])) : "memory");'
        TAIL = 'ok_async_wait<0>();'
    elif stages >= 3:
        LAG = f'if (st >= 1u) {{ ok_async_wait<1>(); ok_fence_proxy_async(); ok_mbar_arrive(&ok_bar[(st - 1u) % {S}u]); }}'
        TAIL = f'ok_async_wait<0>(); ok_fence_proxy_async(); ok_mbar_arrive(&ok_bar[(nblk_14 - 1u) % {S}u]);'
    else:
        LAG = f'ok_async_wait<0>(); ok_fence_proxy_async(); ok_mbar_arrive(&ok_bar[st % {S}u]);'
        TAIL = ''

    if ahead:
        # The next block's page read one block ahead (before this block's wait), kept in a register.
        PAGE = ('page = page_next; if (st + 1u < nblk_14) { page_next = ok_page(block_table, b_0 * pc.pages_per_seq + '
                'ok_min_u32((st + 1u) * 64u + row, len_7 - 1u) / page_size, paged); }')
    else:
        PAGE = 'page = ok_page(block_table, b_0 * pc.pages_per_seq + tok / page_size, paged);'

    # With `backoff` the copying warps sleep between their polls of an "empty" barrier
    # (`__nanosleep`), so that their polls do not take the computing warps' issue slots.
    WAIT = 'ok_mbar_wait_sleep' if backoff else 'ok_mbar_wait'

    def edit(s):
        # Helpers before the kernel's push-constant struct.
        i = s.index('struct ok_push_attn_prefill_mma {')
        s = s[:i] + HELPERS + '\n' + s[i:]
        # 384 invocations, one workgroup per SM.
        s, n = re.subn(r'__launch_bounds__\(256, 1\)', '__launch_bounds__(384, 1)', s)
        assert n == 1, n
        # The barriers, initialized by invocation 0 before anything; the 32-token form
        # keeps 256 invocations.
        decl = re.search(r'    __shared__ __align__\(16\) unsigned int sh_cells\[.*?\];\n', s)
        init = (f'    __shared__ __align__(8) unsigned long long ok_bar[{2 * stages}];\n'
                f'    if (threadIdx.x == 0u) {{ for (int i = 0; i < {S}; i++) {{ ok_mbar_init(&ok_bar[i], {4 if rows else 32 if one_warp else 128}u); ok_mbar_init(&ok_bar[{S} + i], {8 if rows else 256}u); }} }}\n'
                '    __syncthreads();\n'
                '    if (!kv64 && threadIdx.x >= 256u) { return; }\n')
        s = s[:decl.end()] + init + s[decl.end():]
        # The copying warpgroup, once the block count is known.
        m = re.search(r'    unsigned int nblk_14 = .*?;\n', s)
        if rows:
            prod = ROWS.replace('{S}', S)
        elif one_warp:
            prod = ONE_WARP.replace('{S}', S).replace('{WAIT}', WAIT)
        else:
          prod = f'''    if (kv64 && t0_1 >= 256u) {{
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        const unsigned int p = t0_1 - 256u, row = p >> 1u, c0 = (p & 1u) * 8u;
        unsigned int page_next = ok_page(block_table, b_0 * pc.pages_per_seq + ok_min_u32(row, len_7 - 1u) / page_size, paged);
        for (unsigned int st = 0u; st < nblk_14; st++) {{
            const unsigned int s = st % {S}u;
            const unsigned int tok = ok_min_u32(st * 64u + row, len_7 - 1u);
            unsigned int page;
            {PAGE}
            if (st >= {S}u) {{ {WAIT}(&ok_bar[{S}u + s], ((st / {S}u) - 1u) & 1u); }}
            const unsigned int src = ((page * page_size + tok % page_size) * pc.n_kv_heads + kvh_8) * 64u;
            const unsigned int buf = s * 8704u;
            #pragma unroll
            for (unsigned int j = 0u; j < 8u; j++) {{
                const unsigned int quad = c0 + j;
                ok_async_copy16_past_l1(&sh_kv[buf + ok_panel_word_u32(row, quad, 64u)], &k[src + quad * 4u]);
                ok_async_copy16_past_l1(&sh_kv[buf + 4352u + ok_panel_word_u32(row, quad, 64u)], &v[src + quad * 4u]);
            }}
            ok_async_commit();
            {LAG}
        }}
        {TAIL}
        return;
    }}
    if (kv64) {{ asm volatile("setmaxnreg.inc.sync.aligned.u32 232;"); }}
'''
        s = s[:m.end()] + prod + s[m.end():]
        # No workgroup barrier after the Q tiles in the 64-token form (nothing shared yet).
        # (The Q tiles are `tl_q0` … in the kernel of 451ccfa, `tl_qa0` … written as a tile
        # array since; the line numbers in the comments moved with it, the code did not.)
        i = re.search(r'    ok_tile_set_a\(tl_qa?7, qt_38\);', s).start()
        j = s.index('ok_panel_barrier();', i)
        s = s[:j] + 'if (!kv64) { ok_panel_barrier(); }' + s[j + len('ok_panel_barrier();'):]
        # Each step waits for its block's "full" barrier instead of its copies and a barrier.
        found = re.findall(r'if \(\(kv64 && \(st_61 >= 1u\)\)\) \{\n                // line \d+\n                ok_async_wait<0>\(\);\n                // line \d+\n                ok_panel_barrier\(\);', s)
        assert len(found) == 1
        old = found[0]
        wait = f'ok_mbar_wait(&ok_bar[(st_61 - 1u) % {S}u], ((st_61 - 1u) / {S}u) & 1u);'
        if rows:
            wait = f'if ((t0_1 & 31u) == 0u) {{ {wait} }} __syncwarp();'
        s = s.replace(old, 'if ((kv64 && (st_61 >= 1u))) {\n                ' + wait + (' ok_fence_proxy_async();' if noinc else ''))
        # After the wait that completes block st − 2's P · V, its buffer is released.
        i = re.search(r'// line \d+\n                ok_tile_mma_wait\(\);', s).start()
        j = s.index('\n', s.index('ok_tile_fence_a(tl_p3);', i))
        release = f'ok_mbar_arrive(&ok_bar[{S}u + (st_61 - 2u) % {S}u]);'
        if rows:
            release = f'__syncwarp(); if ((t0_1 & 31u) == 0u) {{ {release} }}'
        s = s[:j] + f'\n                if (st_61 >= 2u) {{ {release} }}' + s[j:]
        # Buffers by the step's block, in `stages` buffers.
        s, n = re.subn(r'unsigned int kw_62 = .*?;', f'unsigned int kw_62 = ((st_61 - 1u) % {S}u) * 8704u;', s)
        assert n == 1
        s, n = re.subn(r'unsigned int kbase_79 = (.*?);', lambda mm: f'unsigned int kbase_79 = kv64 ? ((u_78 % {S}u) * 17408u) : {mm.group(1)};', s)
        assert n == 1
        # No copies or commits by the computing warpgroups in the 64-token form.
        s, n = re.subn(r'if \(\(st_61 < nblk_14\)\) \{\n', 'if ((!kv64) && (st_61 < nblk_14)) {\n', s)
        assert n == 1
        s, n = re.subn(r'(// line \d+\n            )ok_async_commit\(\);', lambda mm: mm.group(1) + 'if (!kv64) { ok_async_commit(); }', s)
        assert n == 1
        if stages == 4:
            # Four buffers: the dynamic shared memory grows by the scratch's size again.
            i = s.index('attn_prefill_mma_dyn_shared() {')
            j = s.index('}', i + 33)
            body = s[i:j]
            assert body.count('(kv64 ? 8704u : 4096u)') == 1
            s = s[:i] + body.replace('(kv64 ? 8704u : 4096u)', '(kv64 ? 17408u : 4096u)') + s[j:]
        return s
    return edit


src, pre = sys.argv[1], sys.argv[2]
FORMS = [('ws', dict(stages=3)), ('ws2', dict(stages=2)), ('wsp', dict(stages=3, ahead=True)),
         ('wsn', dict(stages=3, noinc=True, ahead=True)), ('wsn4', dict(stages=4, noinc=True, ahead=True)),
         ('wsb', dict(stages=3, noinc=True, ahead=True, backoff=True)),
         ('wsb1', dict(stages=3, noinc=True, ahead=True, backoff=True, one_warp=True)), ('wsr', dict(stages=3, rows=True))]
for name, form in FORMS:
    dst = f'{pre}-{name}'
    print(name, write_probe(src, dst, 'attn_prefill_mma', make(**form))[:12])
    m = os.path.join(dst, 'manifest.json')
    j = json.load(open(m))
    for kern in j['kernels']:
        if kern['name'] == 'attn_prefill_mma':
            kern['workgroup'] = [384, 1, 1]
    t = open(m).read()
    # Only the workgroup's line changes: the manifest's text otherwise as generated.
    old = '"name": "attn_prefill_mma"'
    i = t.index(old)
    w = t.index('"workgroup"', i)
    e = t.index(']', w)
    t = t[:w] + '"workgroup": [384, 1, 1' + t[e:]
    open(m, 'w').write(t)
