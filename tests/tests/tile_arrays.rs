//! Tile arrays (docs/DSL.md, "Tile arrays"): the interpreter names an element as written
//! (`o[2]`) in its faults; a kernel written with `[tile_acc(); 4]`,
//! `[tile_a(); 2]` and loops the macro unrolls gives the bits of the same kernel written
//! out with one named tile each, on the interpreter and on every backend present
//! (msl-emu; CUDA and NVIDIA's Vulkan on the GPU machine). Negative control: the array
//! kernel with its elements stored rotated by one place differs from the written-out one.

use onekernel_dsl::types::StorageType;
use onekernel_runtime::{Args, Backend, BackendError, HostBuffer, Launch};
use onekernel_tests::harness::{gpu_backends, msl_emu_or_skip};
use onekernel_tests::tiles::{f16_words, normal_halves, Generated};
use onekernel_tests::Rng;

mod k {
    use onekernel_macros::kernel;

    /// Each group: four accumulators filled with values of `c`, each plus two products of A tiles
    /// (rows of `a`) and B tiles (rows of `b`), stored to `out` (element `j` of the
    /// array at `g · 1024 + 256 · ((j + 3 · rev) mod 4)`: with `rev` 1 rotated by one place).
    #[kernel(workgroup = 64, fast)]
    pub fn tile_array_sums(#[len(1024)] a: &[u32], #[len(1024)] b: &[u32], #[len(128)] c: &[f32], #[len(2048)] out: &mut [f32], #[push] rev: u32) {
        let o = [tile_acc(); 4];
        let q = [tile_a(); 2];
        let tb = tile_b();
        let g = local_id().x / 32;
        for kk in 0..2u32 {
            tile_load(q[kk], a, g * 512 + 16 * kk, 32, false);
        }
        for j in 0..4u32 {
            tile_fill(o[j], c[g * 64 + 16 * j]);
        }
        for kk in 0..2u32 {
            for j in 0..4u32 {
                tile_load(tb, b, g * 512 + kk * 256 + 16 * j, 64, false);
                tile_mma(o[j], q[kk], tb);
            }
        }
        for j in 0..4u32 {
            tile_store(o[j], out, g * 1024 + 256 * ((j + rev * 3) % 4), 16, false);
        }
    }

    /// Element `o[2]` read before it is written: the interpreter's fault names it so.
    #[kernel(workgroup = 32, fast)]
    pub fn tile_array_unset(#[len(256)] b: &[u32], #[len(1024)] out: &mut [f32]) {
        let o = [tile_acc(); 4];
        let q = [tile_a(); 2];
        let tb = tile_b();
        tile_fill(o[0], 0.0);
        tile_load(q[0], b, 0, 16, false);
        tile_load(tb, b, 0, 16, false);
        tile_mma(o[0], q[0], tb);
        tile_mma(o[2], q[0], tb);
        tile_store(o[0], out, 0, 16, false);
    }

    /// `tile_array_sums` with `rev` 0, written out with named tiles.
    #[kernel(workgroup = 64, fast)]
    pub fn tile_named_sums(#[len(1024)] a: &[u32], #[len(1024)] b: &[u32], #[len(128)] c: &[f32], #[len(2048)] out: &mut [f32]) {
        let o0 = tile_acc();
        let o1 = tile_acc();
        let o2 = tile_acc();
        let o3 = tile_acc();
        let q0 = tile_a();
        let q1 = tile_a();
        let tb = tile_b();
        let g = local_id().x / 32;
        tile_load(q0, a, g * 512, 32, false);
        tile_load(q1, a, g * 512 + 16, 32, false);
        tile_fill(o0, c[g * 64]);
        tile_fill(o1, c[g * 64 + 16]);
        tile_fill(o2, c[g * 64 + 32]);
        tile_fill(o3, c[g * 64 + 48]);
        for kk in 0..2u32 {
            tile_load(tb, b, g * 512 + kk * 256, 64, false);
            if kk == 0 {
                tile_mma(o0, q0, tb);
            } else {
                tile_mma(o0, q1, tb);
            }
            tile_load(tb, b, g * 512 + kk * 256 + 16, 64, false);
            if kk == 0 {
                tile_mma(o1, q0, tb);
            } else {
                tile_mma(o1, q1, tb);
            }
            tile_load(tb, b, g * 512 + kk * 256 + 32, 64, false);
            if kk == 0 {
                tile_mma(o2, q0, tb);
            } else {
                tile_mma(o2, q1, tb);
            }
            tile_load(tb, b, g * 512 + kk * 256 + 48, 64, false);
            if kk == 0 {
                tile_mma(o3, q0, tb);
            } else {
                tile_mma(o3, q1, tb);
            }
        }
        tile_store(o0, out, g * 1024, 16, false);
        tile_store(o1, out, g * 1024 + 256, 16, false);
        tile_store(o2, out, g * 1024 + 512, 16, false);
        tile_store(o3, out, g * 1024 + 768, 16, false);
    }
}

struct Inputs {
    a: Vec<u32>,
    b: Vec<u32>,
    c: Vec<f32>,
}

fn inputs(seed: u64) -> Inputs {
    let mut r = Rng::new(seed);
    let a = normal_halves(&mut r, 2048);
    let b = normal_halves(&mut r, 2048);
    Inputs { a: f16_words(&a), b: f16_words(&b), c: r.f32_vec(128, -4.0, 4.0) }
}

fn run(built: &Generated, be: &mut dyn Backend, name: &str, x: &Inputs, rev: Option<u32>) -> Result<Vec<u32>, BackendError> {
    let km = built.manifest.kernel(name).unwrap();
    let mut args = Args::new()
        .buffer("a", HostBuffer::from_u32(&x.a))
        .buffer("b", HostBuffer::from_u32(&x.b))
        .buffer("c", HostBuffer::from_f32(&x.c))
        .buffer("out", HostBuffer::zeros(StorageType::F32, 2048));
    if let Some(r) = rev {
        args = args.scalar("rev", r);
    }
    let l = Launch { kernel: km, artifacts: &built.dir, spec: &km.variants[0].spec, groups: [1, 1, 1] };
    be.launch(&l, &mut args)?;
    Ok(args.get_buffer("out").unwrap().to_f32().iter().map(|v| v.to_bits()).collect())
}

#[test]
fn a_tile_array_kernel_gives_the_bits_of_the_kernel_written_out_on_every_backend() {
    let built = Generated::new(vec![k::tile_array_sums().unwrap(), k::tile_named_sums().unwrap()], "tile-arrays");
    let mut backends: Vec<Box<dyn Backend>> = vec![Box::new(onekernel_runtime::cpu::CpuBackend::new(built.kernels.clone()))];
    backends.extend(gpu_backends());
    if let Some(e) = msl_emu_or_skip() {
        backends.push(Box::new(e));
    }
    for seed in [7u64, 8, 9] {
        let x = inputs(seed);
        for be in backends.iter_mut() {
            let name = be.name().to_string();
            let arrays = match run(&built, be.as_mut(), "tile_array_sums", &x, Some(0)) {
                Ok(v) => v,
                Err(BackendError::Unsupported { reason, .. }) => {
                    println!("SKIPPED on {name}: {reason}");
                    continue;
                }
                Err(e) => panic!("{name}: {e}"),
            };
            let named = run(&built, be.as_mut(), "tile_named_sums", &x, None).unwrap();
            assert_eq!(arrays, named, "{name}, seed {seed}: the tile array kernel's bits");
            // Negative control: the elements stored rotated by one place.
            let rotated = run(&built, be.as_mut(), "tile_array_sums", &x, Some(1)).unwrap();
            assert_ne!(rotated, named, "{name}, seed {seed}: the rotated stores must differ");
            assert_eq!(rotated[..256], named[256..512], "{name}, seed {seed}: element 1 stored first");
        }
    }
}

#[test]
fn tile_array_elements_print_as_the_written_out_names() {
    let built = Generated::new(vec![k::tile_array_sums().unwrap()], "tile-array-names");
    let cuda = std::fs::read_to_string(built.dir.join("cuda/tile_array_sums.cu")).unwrap();
    for t in ["tl_o0", "tl_o3", "tl_q1"] {
        assert!(cuda.contains(t), "{t} in the generated CUDA");
    }
    assert!(!cuda.contains("tl_o["), "no bracket in a generated name");
}

#[test]
fn the_interpreter_names_a_tile_array_element_as_written() {
    let k = k::tile_array_unset().unwrap();
    let mut args = Args::new().buffer("b", HostBuffer::from_u32(&[0x3c00_3c00; 256])).buffer("out", HostBuffer::zeros(StorageType::F32, 1024));
    match onekernel_runtime::cpu::run(&k, &mut args, [1, 1, 1]) {
        Err(onekernel_runtime::cpu::InterpError::Fault { fault: onekernel_runtime::cpu::Fault::TileUndefined { op, tile, group }, .. }) => {
            assert_eq!((op, tile.as_str(), group), ("tile_mma", "o[2]", 0));
        }
        other => panic!("expected o[2] undefined, got {other:?}"),
    }
}
