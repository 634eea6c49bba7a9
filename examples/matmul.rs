//! Tiled matrix multiplication in local memory (Kirk and Hwu, *Programming
//! Massively Parallel Processors*, chapter 5, with its boundary checks; the
//! NVIDIA OpenCL SDK's `oclMatrixMul` has the same shape), on a 2D NDRange:
//!
//! ```c
//! kernel void matmul(global const uint *a, global const uint *b, global uint *c, int n,
//!                    local uint *as, local uint *bs) {
//!     int tx = get_local_id(0), ty = get_local_id(1);
//!     int row = get_global_id(1), col = get_global_id(0);
//!     uint sum = 0;
//!     for (int t = 0; t < (n + TILE - 1) / TILE; t++) {
//!         int ac = t * TILE + tx, br = t * TILE + ty;
//!         as[ty * TILE + tx] = row < n && ac < n ? a[row * n + ac] : 0;
//!         bs[ty * TILE + tx] = br < n && col < n ? b[br * n + col] : 0;
//!         barrier(CLK_LOCAL_MEM_FENCE);
//!         for (int k = 0; k < TILE; k++) sum += as[ty * TILE + k] * bs[k * TILE + tx];
//!         barrier(CLK_LOCAL_MEM_FENCE);
//!     }
//!     if (row < n && col < n) c[row * n + col] = sum;
//! }
//! ```
//!
//! Bugs: the barrier after loading the tiles removed (a work-item reads
//! its row of the tile before the others have written it: a data race in
//! local memory); the barrier after using them removed (the next tile's
//! loads overwrite elements that slower work-items still read: a
//! write-after-read race in local memory); the boundary checks left out
//! for a matrix whose size is not a multiple of the tile (a load past the
//! end of a row reads the next row's element, and past the end of the
//! matrix is out of bounds).
//!
//! `cargo run --release --example matmul` runs the correct kernel
//! natively; `-- --check [variant|all]` model-checks a variant.

#![allow(dead_code)]

#[path = "common/mod.rs"]
mod common;

use clmm::{launch_with_local, FenceFlags, GlobalBuffer, LocalBuffer, NdRange};

/// The variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Correct,
    NoLoadBarrier,
    NoReuseBarrier,
    NoBoundsCheck,
}

impl Variant {
    pub const ALL: [Variant; 4] = [Variant::Correct, Variant::NoLoadBarrier, Variant::NoReuseBarrier, Variant::NoBoundsCheck];
    pub fn name(self) -> &'static str {
        match self {
            Variant::Correct => "correct",
            Variant::NoLoadBarrier => "no-load-barrier",
            Variant::NoReuseBarrier => "no-reuse-barrier",
            Variant::NoBoundsCheck => "no-bounds-check",
        }
    }
    pub fn describe(self) -> &'static str {
        match self {
            Variant::Correct => "tiles loaded into local memory between two barriers, with boundary checks",
            Variant::NoLoadBarrier => "no barrier between loading the tiles and using them",
            Variant::NoReuseBarrier => "no barrier between using the tiles and loading the next ones",
            Variant::NoBoundsCheck => "no boundary checks, on a matrix whose size is not a multiple of the tile",
        }
    }
    pub fn is_correct(self) -> bool {
        self == Variant::Correct
    }
}

/// `a * b` for `n` x `n` matrices (row-major, wrapping arithmetic), in
/// `tile` x `tile` work-groups over an NDRange rounded up to the tile.
pub fn matmul(a: &[u32], b: &[u32], n: usize, tile: usize, v: Variant) -> Vec<u32> {
    let (ga, gb) = (GlobalBuffer::from_slice(a), GlobalBuffer::from_slice(b));
    let gc = GlobalBuffer::<u32>::new(n * n);
    let size = n.div_ceil(tile) * tile;
    let checked = v != Variant::NoBoundsCheck;
    launch_with_local(
        NdRange::new([size, size], [tile, tile]),
        |_| (LocalBuffer::<u32>::new(tile * tile), LocalBuffer::<u32>::new(tile * tile)),
        |it, (at, bt)| {
            let (tx, ty) = (it.local_id(0), it.local_id(1));
            let (row, col) = (it.global_id(1), it.global_id(0));
            let mut sum = 0u32;
            for t in 0..size / tile {
                let (ac, br) = (t * tile + tx, t * tile + ty);
                at.write(ty * tile + tx, if !checked || (row < n && ac < n) { ga.read(row * n + ac) } else { 0 });
                bt.write(ty * tile + tx, if !checked || (br < n && col < n) { gb.read(br * n + col) } else { 0 });
                if v != Variant::NoLoadBarrier {
                    it.barrier(FenceFlags::LOCAL);
                }
                for k in 0..tile {
                    sum = sum.wrapping_add(at.read(ty * tile + k).wrapping_mul(bt.read(k * tile + tx)));
                }
                if v != Variant::NoReuseBarrier {
                    it.barrier(FenceFlags::LOCAL);
                }
            }
            if !checked || (row < n && col < n) {
                gc.write(row * n + col, sum);
            }
        },
    );
    gc.to_vec()
}

/// `a * b` computed sequentially.
pub fn expected(a: &[u32], b: &[u32], n: usize) -> Vec<u32> {
    let mut c = vec![0u32; n * n];
    for i in 0..n {
        for j in 0..n {
            c[i * n + j] = (0..n).fold(0u32, |s, k| s.wrapping_add(a[i * n + k].wrapping_mul(b[k * n + j])));
        }
    }
    c
}

/// The model-checked program: 4 x 4 matrices in 2 x 2 tiles (4
/// work-groups of 4 work-items, two tiles each); 3 x 3 for the boundary
/// bug (the same NDRange, rounded up).
pub fn program(v: Variant) -> impl Fn() + Sync {
    program_sized(v, if v == Variant::NoBoundsCheck { 3 } else { 4 }, 2)
}

/// The same with other sizes.
pub fn program_sized(v: Variant, n: usize, tile: usize) -> impl Fn() + Sync {
    move || {
        let a: Vec<u32> = (0..n * n).map(|i| i as u32 + 1).collect();
        let b: Vec<u32> = (0..n * n).map(|i| (i as u32 * 7) % 5 + 1).collect();
        assert_eq!(matmul(&a, &b, n, tile, v), expected(&a, &b, n), "the product");
    }
}

fn native() {
    let (n, tile) = (45, 8);
    let a: Vec<u32> = (0..n * n).map(|i| (i as u32).wrapping_mul(2654435761) >> 20).collect();
    let b: Vec<u32> = (0..n * n).map(|i| (i as u32).wrapping_mul(40503) >> 8).collect();
    let t = std::time::Instant::now();
    let c = matmul(&a, &b, n, tile, Variant::Correct);
    println!(
        "product of two {n} x {n} matrices in {tile} x {tile} tiles ({} work-groups of {} work-items): {} in {:?}",
        n.div_ceil(tile) * n.div_ceil(tile),
        tile * tile,
        if c == expected(&a, &b, n) { "correct" } else { "WRONG" },
        t.elapsed()
    );
}

fn check(v: Variant) {
    common::check_program(&format!("{} ({})", v.name(), v.describe()), program(v));
}

fn main() {
    let variants = common::Variants {
        example: "matmul",
        all: &Variant::ALL,
        name: Variant::name,
        describe: Variant::describe,
        is_correct: Variant::is_correct,
    };
    common::main(variants, native, check);
}
