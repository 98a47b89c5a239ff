//! Rotary position embedding from a precomputed f32 cos/sin cache.

use onekernel_macros::kernel;

/// Rotates the dims `[rot_offset, rot_offset + n_rot)` of every head of every token by
/// the angles of its position: `(x0, x1) → (x0·c − x1·s, x0·s + x1·c)` with `c, s` read
/// from the `[max_pos][n_rot / 2]` cos and sin caches (built on the host in f64 and
/// rounded once); `inverse` rotates by −θ (`s` negated) and divides by `c² + s²`, the
/// exact inverse of the forward rotation with the cached values (one rounding in all).
/// Pairs are `(i, i + n_rot/2)`
/// (`neox`, GPT-NeoX and Llama) or `(2i, 2i + 1)` (interleaved, GPT-J); the other dims
/// are copied. `x` is `[n_tokens][n_heads][head_dim]` f32, `y` the same in `T`.
///
/// Each output element is one invocation (`groups = [ceil(n_heads · head_dim / 128),
/// n_tokens, 1]`), computing its pair's two products and their sum as `Dot2` does
/// (exact products by `fma`, a TwoSum, the errors added back): the result is the
/// correctly rounded value of `x0·c − x1·s` (0.5 ulp measured). A rotation and its
/// inverse return each element within one unit in the last place of the pair's larger
/// element (`tests/tests/layers.rs`); the rotated pair is stored in f32, so the smaller
/// element of a pair cannot come back to within units of itself (docs/LAYERS.md).
#[kernel(workgroup = 128, variants(T = [f32, bf16]))]
pub fn rope(
    #[len(n_tokens * n_heads * head_dim)] x: &[f32],
    #[len(n_tokens)] pos: &[u32],
    #[len(max_pos * (n_rot / 2))] cos: &[f32],
    #[len(max_pos * (n_rot / 2))] sin: &[f32],
    #[len(n_tokens * n_heads * head_dim)] y: &mut [T],
    #[push] n_tokens: u32,
    #[push] n_heads: u32,
    #[push] head_dim: u32,
    #[push] n_rot: u32,
    #[push] rot_offset: u32,
    #[push] max_pos: u32,
    #[push] neox: u32,
    #[push] inverse: u32,
) {
    let i = global_id().x;
    let token = group_id().y;
    if i < n_heads * head_dim {
        let at = token * n_heads * head_dim + i;
        let d = i % head_dim;
        let mut v = x[at];
        if d >= rot_offset && d < rot_offset + n_rot {
            let local = d - rot_offset;
            let half = n_rot / 2;
            let mut p = local / 2;
            let mut first = local % 2 == 0;
            if neox != 0 {
                p = local % half;
                first = local < half;
            }
            let mut partner = at - 1;
            if first {
                partner = at + 1;
                if neox != 0 {
                    partner = at + half;
                }
            } else {
                if neox != 0 {
                    partner = at - half;
                }
            }
            let c = cos[pos[token] * half + p];
            let mut s = sin[pos[token] * half + p];
            if inverse != 0 {
                s = -s;
            }
            // first: x0·c + x1·(−s); second: x0·s + x1·c, x0 being the partner.
            let mut a = v;
            let mut b = c;
            let mut e = x[partner];
            let mut f = -s;
            if !first {
                a = x[partner];
                b = s;
                e = v;
                f = c;
            }
            let p1 = a * b;
            let e1 = fma(a, b, -p1);
            let p2 = e * f;
            let e2 = fma(e, f, -p2);
            let h = p1 + p2;
            let bp = h - p1;
            let eh = (p1 - (h - bp)) + (p2 - bp);
            let lo = eh + (e1 + e2);
            v = h + lo;
            if inverse != 0 {
                // The cached c, s have c² + s² = 1 + d only within the cache's rounding
                // (|d| < 2.5e-7): the exact inverse of the forward rotation divides by
                // 1 + d, here as (h + lo)(1 − d) rounded once (d² is below 1e-13); a
                // plain rotation by −θ would carry the cache's error into the round trip.
                let cc = c * c;
                let ec = fma(c, c, -cc);
                let ss = s * s;
                let es = fma(s, s, -ss);
                let q = cc + ss;
                let bq = q - cc;
                let eq = (cc - (q - bq)) + (ss - bq);
                let d = (q - 1.0) + (eq + (ec + es));
                v = h + fma(-h, d, lo);
            }
        }
        y[at] = v;
    }
}
