# Hand-edited copies of the generated `attn_prefill_mma` CUDA (timing probes; the
# kernel's own CUDA is what `onekernel gen` writes):
#   pv128   P · V as one wgmma m64n128k16 per 16 tokens (all eight O tiles) instead of two
#           m64n64k16;
#   assume  pv128 and the workgroup's shape told to the compiler (`__builtin_assume`;
#           the CUDA template now does this for every kernel);
#   ss      assume, and S = Q · Kᵀ with Q read from a panel in shared memory (wgmma's
#           A by descriptor) instead of eight register A tiles;
#   peel    ss, and the block loop's body a lambda called for steps 0 and 1 and then in a
#           loop from step 2, where the products' conditions fold (no wgmma wait injected
#           by ptxas after `P · V`; the working tree's kernel only);
#   uncond  O rescaled at every block (the online softmax's running maximum always
#           moves), not only when a row passed it by more than 8: ptxas copies all of O's
#           registers at every block for the rare rescale otherwise;
#   qss     ss alone, on a kernel whose template already tells the compiler the shape;
#   keep    a timing probe with WRONG results: O is never rescaled (filled once before
#           the loop; the running maxima still move): what the rescale's branch costs
#           when ptxas must merge O's registers after it (216 registers against 255).
# usage: variants.py SRC_GENERATED DST_ROOT  (writes DST_ROOT/<variant>/)
import sys, re, shutil, hashlib, os
src, root = sys.argv[1], sys.argv[2]
NAME = 'cuda/attn_prefill_mma.cu'

HELPER = r'''
// Timing probe: acc (8 tiles, 128 columns) += a · V panel rows r0 … r0 + 15 (TRANS).
static __device__ __forceinline__ void ok_pv128(float* c0, float* c1, float* c2, float* c3, float* c4, float* c5, float* c6, float* c7,
    const unsigned int* a, const unsigned int* arr, unsigned int base, unsigned int rows, unsigned int r0, unsigned int lindex) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    const unsigned int start = (unsigned int)__cvta_generic_to_shared(arr) + 4u * base + r0 * 128u;
    const unsigned long long desc = (unsigned long long)((start & 0x3ffffu) >> 4) | ((unsigned long long)(((rows * 128u) >> 4) & 0x3fffu) << 16) |
                                    ((unsigned long long)(1024u >> 4) << 32) | (1ull << 62);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    asm volatile(
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
        "{ %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "{ %64, %65, %66, %67}, %68, 1, 1, 1, 1;\n"
        "wgmma.commit_group.sync.aligned;"
        : "+f"(c0[0]), "+f"(c0[1]), "+f"(c0[2]), "+f"(c0[3]), "+f"(c0[4]), "+f"(c0[5]), "+f"(c0[6]), "+f"(c0[7]),
          "+f"(c1[0]), "+f"(c1[1]), "+f"(c1[2]), "+f"(c1[3]), "+f"(c1[4]), "+f"(c1[5]), "+f"(c1[6]), "+f"(c1[7]),
          "+f"(c2[0]), "+f"(c2[1]), "+f"(c2[2]), "+f"(c2[3]), "+f"(c2[4]), "+f"(c2[5]), "+f"(c2[6]), "+f"(c2[7]),
          "+f"(c3[0]), "+f"(c3[1]), "+f"(c3[2]), "+f"(c3[3]), "+f"(c3[4]), "+f"(c3[5]), "+f"(c3[6]), "+f"(c3[7]),
          "+f"(c4[0]), "+f"(c4[1]), "+f"(c4[2]), "+f"(c4[3]), "+f"(c4[4]), "+f"(c4[5]), "+f"(c4[6]), "+f"(c4[7]),
          "+f"(c5[0]), "+f"(c5[1]), "+f"(c5[2]), "+f"(c5[3]), "+f"(c5[4]), "+f"(c5[5]), "+f"(c5[6]), "+f"(c5[7]),
          "+f"(c6[0]), "+f"(c6[1]), "+f"(c6[2]), "+f"(c6[3]), "+f"(c6[4]), "+f"(c6[5]), "+f"(c6[6]), "+f"(c6[7]),
          "+f"(c7[0]), "+f"(c7[1]), "+f"(c7[2]), "+f"(c7[3]), "+f"(c7[4]), "+f"(c7[5]), "+f"(c7[6]), "+f"(c7[7])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc)
        : "memory");
#else
    ok_tile_mma_panel<true>(c0, c1, c2, c3, a, arr, base, rows, r0, 0u, lindex);
    ok_tile_mma_panel<true>(c4, c5, c6, c7, a, arr, base, rows, r0, 64u, lindex);
#endif
}
'''

def pv128(s):
    s = s.replace('struct ok_push_attn_prefill_mma {', HELPER + '\nstruct ok_push_attn_prefill_mma {', 1)
    pat = (r'ok_tile_mma_panel<true>\(tl_o0, tl_o1, tl_o2, tl_o3, (tl_\w+), sh_kv, (vw_\d+), 64u, (\d+u), 0u, ok_lindex\);\n'
           r'(\s*// line \d+\n)?\s*ok_tile_mma_panel<true>\(tl_o4, tl_o5, tl_o6, tl_o7, \1, sh_kv, \2, 64u, \3, 64u, ok_lindex\);')
    s, n = re.subn(pat, r'ok_pv128(tl_o0, tl_o1, tl_o2, tl_o3, tl_o4, tl_o5, tl_o6, tl_o7, \1, sh_kv, \2, 64u, \3, ok_lindex);', s)
    assert n == 4, n
    return s

def assume(s):
    s, n = re.subn(r'(attn_prefill_mma_impl\([^\n]*\n\s*ok_grid_dependency_wait\(\);\n)',
                   r'\1    __builtin_assume(threadIdx.x < 128u); __builtin_assume(threadIdx.y == 0u); __builtin_assume(threadIdx.z == 0u);\n'
                   r'    __builtin_assume(blockDim.x == 128u); __builtin_assume(blockDim.y == 1u); __builtin_assume(blockDim.z == 1u);\n', s)
    assert n == 1, n
    return s

SS_HELPER = r'''
// Timing probe: S (4 tiles) += Q panel (64 rows, columns col0 … col0 + 15) · K panel rows r0 … r0 + 63.
static __device__ __forceinline__ void ok_s_ss(float* c0, float* c1, float* c2, float* c3, const unsigned int* qp, const unsigned int* arr,
    unsigned int base, unsigned int rows, unsigned int r0, unsigned int col0) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    const unsigned int sa = (unsigned int)__cvta_generic_to_shared(qp) + (col0 >> 6) * 64u * 128u + 2u * (col0 & 63u);
    const unsigned int sb = (unsigned int)__cvta_generic_to_shared(arr) + 4u * base + (col0 >> 6) * rows * 128u + r0 * 128u + 2u * (col0 & 63u);
    const unsigned long long da = (unsigned long long)((sa & 0x3ffffu) >> 4) | ((unsigned long long)(((64u * 128u) >> 4) & 0x3fffu) << 16) |
                                  ((unsigned long long)(1024u >> 4) << 32) | (1ull << 62);
    const unsigned long long db = (unsigned long long)((sb & 0x3ffffu) >> 4) | ((unsigned long long)(((rows * 128u) >> 4) & 0x3fffu) << 16) |
                                  ((unsigned long long)(1024u >> 4) << 32) | (1ull << 62);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    asm volatile(
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
        "{ %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
        "%32, %33, 1, 1, 1, 0, 0;\n"
        "wgmma.commit_group.sync.aligned;"
        : "+f"(c0[0]), "+f"(c0[1]), "+f"(c0[2]), "+f"(c0[3]), "+f"(c0[4]), "+f"(c0[5]), "+f"(c0[6]), "+f"(c0[7]),
          "+f"(c1[0]), "+f"(c1[1]), "+f"(c1[2]), "+f"(c1[3]), "+f"(c1[4]), "+f"(c1[5]), "+f"(c1[6]), "+f"(c1[7]),
          "+f"(c2[0]), "+f"(c2[1]), "+f"(c2[2]), "+f"(c2[3]), "+f"(c2[4]), "+f"(c2[5]), "+f"(c2[6]), "+f"(c2[7]),
          "+f"(c3[0]), "+f"(c3[1]), "+f"(c3[2]), "+f"(c3[3]), "+f"(c3[4]), "+f"(c3[5]), "+f"(c3[6]), "+f"(c3[7])
        : "l"(da), "l"(db)
        : "memory");
#else
    __trap();
#endif
}
'''

def ss(s):
    s = s.replace('struct ok_push_attn_prefill_mma {', SS_HELPER + '\nstruct ok_push_attn_prefill_mma {', 1)
    s, n = re.subn(r'(constexpr unsigned int attn_prefill_mma_dyn_shared\(\) \{ return [^;]*)1008u; \}', r'\g<1>1008u + (kv64 ? 16384u : 0u); }', s); assert n == 1, n
    s, n = re.subn(r'(unsigned int\* const sh_kv = [^\n]*\n)', r'\1    unsigned int* const sh_qp = sh_kv + 17408u; // probe: the Q panel (kv64)\n', s); assert n == 1, n
    s, n = re.subn(r'sh_qs\[\(\(\(\(2u \* (j_\d+)\) \+ \(t0_3 / 64u\)\) \* 68u\) \+ (qw_\d+)\)\] = ([^\n]*);\n',
                   r'{ const unsigned int ok_v = \3; const unsigned int ok_r = (2u * \1) + (t0_3 / 64u); if (kv64) { sh_qp[ok_panel_word_u32(ok_r, \2 >> 2, 64u) + (\2 & 3u)] = ok_v; } else { sh_qs[ok_r * 68u + \2] = ok_v; } }\n', s); assert n == 1, n
    s, n = re.subn(r'\s*// line \d+\n\s*ok_tile_ldmatrix<false, false>\(tl_q\d, sh_qs, [^\n]*\n', '\n', s); assert n == 8, n
    s, n = re.subn(r'ok_tile_mma_panel<false>\(tl_s0, tl_s1, tl_s2, tl_s3, tl_q\d, sh_kv, (kw_\d+), 64u, 0u, (\d+u), ok_lindex\);',
                   r'ok_s_ss(tl_s0, tl_s1, tl_s2, tl_s3, sh_qp, sh_kv, \1, 64u, 0u, \2);', s); assert n == 8, n
    s, n = re.subn(r' ok_tile_fence_a\(tl_q\d\);', '', s); assert n >= 8, n
    return s

def peel(s):
    m = re.search(r'( *)const unsigned int (ok_end_\d+) = \(nblk_\d+ \+ lag_\d+\);\n\s*for \(unsigned int (st_\d+) = 0u; st_\d+ < ok_end_\d+; st_\d+\+\+\) \{\n', s)
    assert m, 'loop'
    ind, end, st = m.group(1), m.group(2), m.group(3)
    i = m.end(); depth = 1
    while depth:
        c = s[i]; depth += (c == '{') - (c == '}'); i += 1
    body = s[m.end():i - 1]
    assert 'continue;' not in body and 'break;' not in body
    new = (f'{ind}const unsigned int {end} = (nblk_14 + (kv64 ? 2u : 0u));\n'
           f'{ind}auto ok_step = [&](const unsigned int {st}) __attribute__((always_inline)) {{\n{body}{ind}}};\n'
           f'{ind}if (kv64) {{ ok_step(0u); ok_step(1u); for (unsigned int ok_s = 2u; ok_s < {end}; ok_s++) {{ ok_step(ok_s); }} }}\n'
           f'{ind}else {{ for (unsigned int ok_s = 0u; ok_s < {end}; ok_s++) {{ ok_step(ok_s); }} }}\n')
    return s[:m.start()] + new + s[i:]

def uncond(s):
    s, n = re.subn(r'if \(\(\((u_\d+) == 0u\) \|\| \((ov_\d+)\[0u\] > 8\.0f\)\)\) \{', r'if (true) {', s); assert n == 1, n
    return s

def keep(s):
    i = s.index('if ((u_65 > 0u)) {')
    i = s.rindex('\n', 0, i) + 1
    j = s.index('{', i) + 1; depth = 1
    while depth:
        depth += (s[j] == '{') - (s[j] == '}'); j += 1
    assert s[j:j + 7] == ' else {'
    k = j + 7; depth = 1
    while depth:
        depth += (s[k] == '{') - (s[k] == '}'); k += 1
    s = s[:i] + '                    // probe: O untouched\n' + s[k:]
    fill = ' '.join(f'ok_tile_fill(tl_o{t}, 0.0f);' for t in range(8))
    s, n = re.subn(r'(\n)(    unsigned int rows_\d+\[8\];)', lambda m: m.group(1) + '    ' + fill + '\n' + m.group(2), s, count=1); assert n == 1
    return s

VARIANTS = {'pv128': [pv128], 'assume': [pv128, assume], 'ss': [pv128, assume, ss], 'peel': [pv128, assume, ss, peel], 'uncond': [uncond], 'qss': [ss], 'keep': [keep], 'pvkeep': [pv128, keep]}
for name, edits in VARIANTS.items():
    if len(sys.argv) > 3 and name not in sys.argv[3].split(','):
        continue
    dst = os.path.join(root, name)
    shutil.rmtree(dst, ignore_errors=True); shutil.copytree(src, dst)
    p = os.path.join(dst, NAME)
    s = open(p).read(); old = hashlib.sha256(s.encode()).hexdigest()
    for e in edits:
        s = e(s)
    open(p, 'w').write(s)
    new = hashlib.sha256(s.encode()).hexdigest()
    m = os.path.join(dst, 'manifest.json'); t = open(m).read(); assert t.count(old) == 1
    open(m, 'w').write(t.replace(old, new))
    print(name, new[:12])
