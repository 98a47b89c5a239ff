//! A kernel that touches every DSL construct, and a check that its IR loads.
use onekernel_macros::kernel;

/// Everything at once.
#[kernel(workgroup = (8, 4), fast, variants(flag = [false, true], mode = [1, 2, 4], T = [f32, bf16]))]
pub fn everything(
    x: &[T],
    bytes: &[u8],
    y: &mut [f32],
    #[push] n: u32,
    #[push] bias: f32,
    #[spec(default = 3)] k: i32,
) {
    let s = shared::<f32, 32>();
    let t = local_id().x + local_id().y * WORKGROUP_X;
    let g = global_id().x;
    let mut table = [0.5, 1.5, -2.0, 4.0];
    let mut acc = [0.0f32; 2];
    let mut sum = 0.0;
    for i in (t..n).step_by(32) {
        if i % 2 == 0 {
            continue;
        }
        sum += x[i] * table[i % 4] + (bytes[i] as f32);
        if sum > 1000.0 {
            break;
        }
    }
    table[1] = sum;
    acc[0] = fma(sum, 2.0, bias).max(-1.0).min(1.0);
    acc[1] = select(flag, exp(acc[0]), sqrt(abs(acc[0])) / 3.0);
    acc[1] = acc[1] + fast_exp(acc[1] - 4.0);
    let mut j = k;
    while j > 0 {
        j -= 1;
    }
    let bits = acc[1].to_bits() ^ 0x8000_0000;
    let back = f32::from_bits(bits >> 1 << 1);
    s[t] = back + (mode as f32) + table[1] * 0.0;
    barrier();
    let total = workgroup_sum(s[t]);
    let top = workgroup_max(s[31 - t]);
    if g < n && t == 0 {
        y[group_id().x] = total + top + f16_bits_to_f32(count_ones(bits) & 0xffff) + tanh(bias).clamp(-0.5, 0.5);
        return;
    }
    {
        let inner = -(j as f32) + f32::EPSILON;
        if inner < 0.0 && !flag || num_groups().x == 0 {
            y[0] = inner;
        }
    }
}

fn main() {
    let ks = everything().expect("valid IR");
    let names: Vec<_> = ks.iter().map(|k| k.name.clone()).collect();
    assert_eq!(names, ["everything_f32", "everything_bf16"]);
}
