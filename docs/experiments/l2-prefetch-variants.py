# Hand-edited copies of generated/ for a measurement only (twentieth session, not kept):
# `prefetch.global.L2` of V rows (at a workgroup's start: vstart; per K tile: vtile) and of
# K rows two tiles ahead (kahead; vtilek both) inserted into a39232f's
# generated/cuda/attn_decode_chunk.cu, written to .devbin/exp/gen-NAME for
# `onekernel bench --out DIR`. Results: generated/evidence/bench-ab-l2-prefetch-h200.log.
import shutil, os
src = open('generated/cuda/attn_decode_chunk.cu').read()
cell = "sh_cells[i_21] = ((((page_24 * pc.page_size) + (t_22 % pc.page_size)) * pc.n_kv_heads) + kvh_1);"
assert src.count(cell) == 1
tn = "unsigned int tn_64 = ok_min_u32(tile_33, (n_15 - tb_63));"
assert src.count(tn) == 1
PF = 'asm volatile("prefetch.global.L2 [%0];" :: "l"(PTR));'
def pf(p): return PF.replace('PTR', p)
v_start = cell + "\n if (async_k && pc.v_type == 1u) { const unsigned int* ok_pf = &v[((((page_24 * pc.page_size) + (t_22 % pc.page_size)) * pc.n_kv_heads) + kvh_1) * (head_dim / 2u)]; " + pf('ok_pf') + pf('ok_pf + 32') + " }"
v_tile = tn + "\n if (async_k && pc.v_type == 1u && (t0_3 >> 1) < tn_64) { const unsigned int* ok_pf = &v[sh_cells[tb_63 + (t0_3 >> 1)] * (head_dim / 2u) + (t0_3 & 1u) * 32u]; " + pf('ok_pf') + " }"
k_ahead = "\n if (async_k && pc.k_type == 1u && tb_63 + 2u * tile_33 + (t0_3 >> 1) < n_15 && (t0_3 >> 1) < tile_33) { const unsigned int* ok_pk = &k[sh_cells[tb_63 + 2u * tile_33 + (t0_3 >> 1)] * (head_dim / 2u) + (t0_3 & 1u) * 32u]; " + pf('ok_pk') + " }"
variants = {
  'vstart': src.replace(cell, v_start),
  'vtile': src.replace(tn, v_tile),
  'vtilek': src.replace(tn, v_tile + k_ahead),
  'kahead': src.replace(tn, tn + k_ahead),
}
for name, text in variants.items():
    d = f'.devbin/exp/gen-{name}'
    if os.path.exists(d): shutil.rmtree(d)
    shutil.copytree('generated', d, ignore=shutil.ignore_patterns('evidence'))
    open(f'{d}/cuda/attn_decode_chunk.cu', 'w').write(text)
    print(name, len(text))
