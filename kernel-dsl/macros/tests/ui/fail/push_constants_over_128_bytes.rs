use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn k(
    y: &mut [f32],
    #[push] p0: u32, #[push] p1: u32, #[push] p2: u32, #[push] p3: u32,
    #[push] p4: u32, #[push] p5: u32, #[push] p6: u32, #[push] p7: u32,
    #[push] p8: u32, #[push] p9: u32, #[push] p10: u32, #[push] p11: u32,
    #[push] p12: u32, #[push] p13: u32, #[push] p14: u32, #[push] p15: u32,
    #[push] p16: u32, #[push] p17: u32, #[push] p18: u32, #[push] p19: u32,
    #[push] p20: u32, #[push] p21: u32, #[push] p22: u32, #[push] p23: u32,
    #[push] p24: u32, #[push] p25: u32, #[push] p26: u32, #[push] p27: u32,
    #[push] p28: u32, #[push] p29: u32, #[push] p30: u32, #[push] p31: u32,
    #[push] p32: u32,
) {
    y[0] = 1.0;
}

fn main() {}
