//! The short convolution of linear-attention and Mamba layers (ggml `SSM_CONV`).

use onekernel_macros::kernel;

/// Depthwise causal convolution: `out[b][t][c] = Σ_w window[b][c][t + w]·weight[c][w]`
/// over the window of the `d_conv − 1` previous inputs of channel `c` followed by its
/// `T` new ones, summed in order of `w` from 0 (ggml's order); with `silu`,
/// `y·σ(y)`. One invocation per channel, grid `[⌈C/128⌉, B, 1]`.
///
/// Without `in_place`, `x` is the whole window `[B][C][d_conv − 1 + T]` (ggml's input)
/// and `conv_state` is not touched. With `in_place`, `x` holds the new inputs only,
/// `[B][C][T]`, the previous ones are read from `conv_state` (`[rows][C][d_conv − 1]`) at
/// row `b` (with `gather`, at row `slots[b]`), and the window's last `d_conv − 1` inputs
/// are written back there: the state the next call continues from.
#[kernel(workgroup = 128, variants(d_conv = [2u32, 3, 4], silu = [false, true], in_place = [false, true], gather = [false, true]))]
pub fn ssm_conv(
    #[len(num_groups().y * channels * select(in_place, n_tokens, d_conv - 1 + n_tokens))] x: &[f32],
    #[len(channels * d_conv)] weight: &[f32],
    #[len(select(gather, num_groups().y, 1))] slots: &[i32],
    #[len(select(in_place, select(gather, 1, num_groups().y) * channels * (d_conv - 1), 1))] conv_state: &mut [f32],
    #[len(num_groups().y * n_tokens * channels)] out: &mut [f32],
    #[push] channels: u32,
    #[push] n_tokens: u32,
) {
    let c = global_id().x;
    let b = group_id().y;
    if c < channels {
        let prev = d_conv - 1;
        let mut row = b;
        if gather {
            row = slots[b] as u32;
        }
        let cs = (row * channels + c) * prev;
        let mut w_c = [0.0; 4];
        for w in 0..d_conv {
            w_c[w] = weight[c * d_conv + w];
        }
        // The sliding window: the last d_conv − 1 inputs, then the token's own.
        let mut win = [0.0; 4];
        if in_place {
            for w in 0..d_conv - 1 {
                win[w] = conv_state[cs + w];
            }
        } else {
            for w in 0..d_conv - 1 {
                win[w] = x[(b * channels + c) * (prev + n_tokens) + w];
            }
        }
        for t in 0..n_tokens {
            let mut xt = 0.0;
            if in_place {
                xt = x[(b * channels + c) * n_tokens + t];
            } else {
                xt = x[(b * channels + c) * (prev + n_tokens) + prev + t];
            }
            win[d_conv - 1] = xt;
            let mut y = 0.0;
            for w in 0..d_conv {
                y = y + win[w] * w_c[w];
            }
            if silu {
                y = y * sigmoid(y);
            }
            out[(b * n_tokens + t) * channels + c] = y;
            for w in 0..d_conv - 1 {
                win[w] = win[w + 1];
            }
        }
        if in_place {
            for w in 0..d_conv - 1 {
                conv_state[cs + w] = win[w];
            }
        }
    }
}
