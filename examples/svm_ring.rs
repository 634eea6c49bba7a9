//! A single-producer single-consumer ring buffer in fine-grained shared
//! virtual memory between a host thread (the producer) and a persistent
//! kernel (the consumer) that runs while the host feeds it: the pattern of
//! OpenCL 2.0 SVM with atomics (`CL_MEM_SVM_FINE_GRAIN_BUFFER |
//! CL_MEM_SVM_ATOMICS`), where host and device synchronise through
//! `memory_scope_all_svm_devices` atomics instead of enqueue/finish.
//!
//! ```c
//! // host thread                              // kernel (one work-item, persistent)
//! for (i = 0; i < n; i++) {                   for (i = 0; i < n; i++) {
//!   uint t = atomic_load_explicit(&r->tail,      uint h = atomic_load_explicit(&r->head,
//!       memory_order_relaxed, ALL);                  memory_order_relaxed, ALL);
//!   while (t - atomic_load_explicit(&r->head,    while (atomic_load_explicit(&r->tail,
//!       memory_order_acquire, ALL) == CAP) ;         memory_order_acquire, ALL) == h) ;
//!   r->slot[t % CAP] = item[i];                  out[i] = r->slot[h % CAP];
//!   atomic_store_explicit(&r->tail, t + 1,       atomic_store_explicit(&r->head, h + 1,
//!       memory_order_release, ALL);                  memory_order_release, ALL);
//! }                                            }
//! clWaitForEvents(1, &kernel_done);  // then read out[]
//! ```
//! (`ALL` is `memory_scope_all_svm_devices`; the ring lives in one
//! `clSVMAlloc(ctx, CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS, ...)`.)
//!
//! Bugs: the ring's atomics at `memory_scope_device` (the host thread is in
//! no device: a scoped race), the publishing store relaxed (the slot
//! races), the slots in coarse-grained SVM (consistent only at
//! synchronisation points: the host's writes race with the running
//! kernel), the host reading the output without waiting for the kernel's
//! event, and an off-by-one full test that lets the producer overwrite a
//! slot the consumer has not read yet.
//!
//! `cargo run --release --example svm_ring` streams items natively (a real
//! host thread, the kernel's work-item on a real thread);
//! `-- --check [variant|all]` model-checks a variant.

#![allow(dead_code)]

#[path = "common/mod.rs"]
mod common;

use clmm::host::{self, Context, QueueOrder};
use clmm::{AtomicU32, NdRange, Order, Scope, SvmBuffer};

/// How the ring is built and used (one field per bug).
#[derive(Clone, Copy, Debug)]
pub struct RingConfig {
    /// Scope of every ring atomic.
    pub scope: Scope,
    /// Order of the store that publishes a slot (`tail`).
    pub publish: Order,
    /// The slots in fine-grained SVM (else coarse-grained).
    pub fine_slots: bool,
    /// The producer takes the ring as full only when `t - h > CAP`.
    pub off_by_one: bool,
    /// The host waits for the kernel's event before reading the output.
    pub wait: bool,
}

impl RingConfig {
    /// The correct ring.
    pub const CORRECT: RingConfig =
        RingConfig { scope: Scope::AllSvmDevices, publish: Order::Release, fine_slots: true, off_by_one: false, wait: true };
}

/// The ring: `cap` slots, `head` (next to consume) and `tail` (next to
/// fill), in fine-grained SVM with atomics support.
pub struct Ring {
    slots: SvmBuffer<u32>,
    head: AtomicU32,
    tail: AtomicU32,
    cap: u32,
    c: RingConfig,
}

impl Ring {
    pub fn new(cap: u32, c: RingConfig) -> Ring {
        let slots = if c.fine_slots { SvmBuffer::fine(cap as usize) } else { SvmBuffer::coarse(cap as usize) };
        Ring { slots, head: AtomicU32::new_svm(0), tail: AtomicU32::new_svm(0), cap, c }
    }

    /// Producer side (the host thread).
    pub fn push(&self, v: u32) {
        let t = self.tail.load(Order::Relaxed, self.c.scope);
        loop {
            let used = t.wrapping_sub(self.head.load(Order::Acquire, self.c.scope));
            let full = if self.c.off_by_one { used > self.cap } else { used >= self.cap };
            if !full {
                break;
            }
            clmm::hint::spin_loop();
        }
        self.slots.write((t % self.cap) as usize, v);
        self.tail.store(t.wrapping_add(1), self.c.publish, self.c.scope);
    }

    /// Consumer side (the kernel).
    pub fn pop(&self) -> u32 {
        let h = self.head.load(Order::Relaxed, self.c.scope);
        while self.tail.load(Order::Acquire, self.c.scope) == h {
            clmm::hint::spin_loop();
        }
        let v = self.slots.read((h % self.cap) as usize);
        self.head.store(h.wrapping_add(1), Order::Release, self.c.scope);
        v
    }
}

/// A host thread pushes `items` through a ring of `cap` slots to a
/// persistent kernel that pops them into `out`; the host returns `out`.
pub fn stream(c: RingConfig, items: &[u32], cap: u32) -> Vec<u32> {
    let n = items.len();
    let ring = Ring::new(cap, c);
    let out = SvmBuffer::<u32>::coarse(n);
    let ctx = Context::new(1);
    host::scope(|s| {
        let q = s.queue(&ctx, 0, QueueOrder::InOrder);
        let done = q.enqueue_kernel(NdRange::new([1], [1]), &[], |_| {
            for i in 0..n {
                out.write(i, ring.pop());
            }
        });
        let producer = s.spawn(|| {
            for &x in items {
                ring.push(x);
            }
        });
        producer.join();
        if c.wait {
            done.wait();
        }
        out.to_vec()
    })
}

/// The variants: the correct ring and its five bugs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Correct,
    DeviceScope,
    RelaxedPublish,
    CoarseGrainedSlots,
    NoWait,
    OffByOneFull,
}

impl Variant {
    pub const ALL: [Variant; 6] =
        [Variant::Correct, Variant::DeviceScope, Variant::RelaxedPublish, Variant::CoarseGrainedSlots, Variant::NoWait, Variant::OffByOneFull];
    pub fn name(self) -> &'static str {
        match self {
            Variant::Correct => "correct",
            Variant::DeviceScope => "device-scope",
            Variant::RelaxedPublish => "relaxed-publish",
            Variant::CoarseGrainedSlots => "coarse-grained-slots",
            Variant::NoWait => "no-wait",
            Variant::OffByOneFull => "off-by-one-full",
        }
    }
    pub fn describe(self) -> &'static str {
        match self {
            Variant::Correct => "fine-grained SVM, acquire/release at memory_scope_all_svm_devices, wait for the kernel",
            Variant::DeviceScope => "the ring's atomics at memory_scope_device: the host thread is in no device",
            Variant::RelaxedPublish => "the store to tail that publishes a slot is relaxed",
            Variant::CoarseGrainedSlots => "the slots in coarse-grained SVM, consistent only at synchronisation points",
            Variant::NoWait => "the host reads the output without waiting for the kernel's event",
            Variant::OffByOneFull => "the producer takes the ring as full only when tail - head > CAP",
        }
    }
    pub fn is_correct(self) -> bool {
        self == Variant::Correct
    }
    pub fn config(self) -> RingConfig {
        let c = RingConfig::CORRECT;
        match self {
            Variant::Correct => c,
            Variant::DeviceScope => RingConfig { scope: Scope::Device, ..c },
            Variant::RelaxedPublish => RingConfig { publish: Order::Relaxed, ..c },
            Variant::CoarseGrainedSlots => RingConfig { fine_slots: false, ..c },
            Variant::NoWait => RingConfig { wait: false, ..c },
            Variant::OffByOneFull => RingConfig { off_by_one: true, ..c },
        }
    }
}

/// The model-checked program: two items through a ring of one slot (so
/// the producer must wait for the consumer once).
pub fn program(v: Variant) -> impl Fn() + Sync {
    program_sized(v, 2, 1)
}

/// The same with `n` items and `cap` slots.
pub fn program_sized(v: Variant, n: u32, cap: u32) -> impl Fn() + Sync {
    move || {
        let items: Vec<u32> = (1..=n).map(|i| i * 10).collect();
        let out = stream(v.config(), &items, cap);
        assert_eq!(out, items, "the kernel received other items than the host sent");
    }
}

fn native() {
    let (n, cap) = (100_000u32, 16);
    let items: Vec<u32> = (0..n).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let t = std::time::Instant::now();
    let out = stream(RingConfig::CORRECT, &items, cap);
    println!(
        "{n} items from a host thread through a {cap}-slot fine-grained SVM ring to a persistent kernel: {} in {:?}",
        if out == items { "all received in order" } else { "WRONG" },
        t.elapsed()
    );
}

fn check(v: Variant) {
    common::check_program(&format!("{} ({})", v.name(), v.describe()), program(v));
}

fn main() {
    let variants = common::Variants {
        example: "svm_ring",
        all: &Variant::ALL,
        name: Variant::name,
        describe: Variant::describe,
        is_correct: Variant::is_correct,
    };
    common::main(variants, native, check);
}
