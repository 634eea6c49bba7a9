//! Work stealing between work-groups with the lock-free deque of Cederman
//! and Tsigas ("On dynamic load balancing on graphics processors", Graphics
//! Hardware 2008), which is the Arora-Blumofe-Plaxton deque: the owner
//! pushes and pops at the bottom (tail) without synchronisation in the
//! common case, thieves steal at the top (head) with a CAS on `age` (top
//! index and an ABA tag), and the owner uses the CAS too when it takes the
//! last element.
//!
//! ```c
//! void push(deque *q, task t) {                     // owner
//!     uint b = q->bot; q->deq[b] = t; q->bot = b + 1;    // release: publish t
//! }
//! task pop(deque *q) {                              // owner
//!     uint b = q->bot; if (b == 0) return EMPTY;
//!     q->bot = --b;  fence(seq_cst);  age old = q->age;
//!     task t = q->deq[b];
//!     if (b > old.top) return t;
//!     q->bot = 0; age new = { .tag = old.tag + 1, .top = 0 };
//!     if (b == old.top && CAS(&q->age, old, new)) return t;   // the last element
//!     q->age = new; return EMPTY;
//! }
//! task steal(deque *q) {                            // thief
//!     age old = q->age;  fence(seq_cst);  uint b = q->bot;    // acquire
//!     if (b <= old.top) return EMPTY;
//!     task t = q->deq[old.top];
//!     if (CAS(&q->age, old, (age){ old.tag, old.top + 1 })) return t;
//!     return ABORT;
//! }
//! ```
//!
//! Memory orders follow the C11 Chase-Lev deque of Lê, Pop, Cohen and
//! Zappa Nardelli (PPoPP 2013): slots are relaxed atomics, `bot` is
//! published with release and read with acquire by thieves, and seq_cst
//! fences (`memory_scope_device`) separate the owner's `bot` store from its
//! `age` load and the thief's `age` load from its `bot` load. A task is an
//! index into non-atomic global task descriptors, written before the push.
//!
//! Each work-group owns a deque; work-item 0 of the group operates it and
//! hands the task to the group through local memory; the group sums the
//! task's range of the input (splitting large ranges and pushing the right
//! half), writes the task's sum to the task's result slot and marks the
//! task done (the host adds the results). Groups with nothing to do steal
//! from the others until no task is pending. The root tasks go to
//! work-group 0's deque: put there by the host before the launch, or
//! pushed by work-group 0 at the start of the kernel.
//!
//! Bugs: the push's `bot` store relaxed (a thief can take a task before
//! its descriptor is visible: a data race on the descriptor); the owner
//! taking the last element without the CAS (the owner and a thief both
//! take the same task: an assertion in the kernel); the seq_cst fences
//! dropped (a thief takes the first of two tasks, then the owner pops the
//! second without seeing the steal and the thief steals it without seeing
//! the pop: the same assertion). The model checks use two small scenarios
//! (see [`Scenario`]): each bug shows in the one it names.
//!
//! `cargo run --release --example work_stealing` runs the correct kernel
//! natively; `-- --check [variant|all]` model-checks a variant.

#![allow(dead_code)]

#[path = "common/mod.rs"]
mod common;

use clmm::{atomic_work_item_fence, launch_with_local, AtomicU32, FenceFlags, GlobalBuffer, LocalBuffer, NdRange, Order, Scope};

const DEV: Scope = Scope::Device;

/// The variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Correct,
    PushRelaxed,
    PopNoCas,
    NoScFence,
}

impl Variant {
    pub const ALL: [Variant; 4] = [Variant::Correct, Variant::PushRelaxed, Variant::PopNoCas, Variant::NoScFence];
    pub fn name(self) -> &'static str {
        match self {
            Variant::Correct => "correct",
            Variant::PushRelaxed => "push-relaxed",
            Variant::PopNoCas => "pop-no-cas",
            Variant::NoScFence => "no-sc-fence",
        }
    }
    pub fn describe(self) -> &'static str {
        match self {
            Variant::Correct => "ABP deque with the C11 orders of Le et al.",
            Variant::PushRelaxed => "push publishes `bot` relaxed (no release)",
            Variant::PopNoCas => "pop takes the last element without the CAS on `age`",
            Variant::NoScFence => "the seq_cst fences of pop and steal dropped",
        }
    }
    pub fn is_correct(self) -> bool {
        self == Variant::Correct
    }
}

fn top(age: u32) -> u32 {
    age & 0xffff
}
fn tag(age: u32) -> u32 {
    age >> 16
}
fn make_age(tag: u32, top: u32) -> u32 {
    (tag << 16) | top
}

/// What a steal returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Steal {
    Empty,
    Abort,
    Task(u32),
}

/// One work-group's deque.
pub struct Deque {
    slots: Vec<AtomicU32>,
    bot: AtomicU32,
    age: AtomicU32,
    v: Variant,
}

impl Deque {
    pub fn new(capacity: usize, v: Variant) -> Deque {
        Deque { slots: (0..capacity).map(|_| AtomicU32::new(0)).collect(), bot: AtomicU32::new(0), age: AtomicU32::new(0), v }
    }

    fn sc_fence(&self) {
        if self.v != Variant::NoScFence {
            atomic_work_item_fence(FenceFlags::GLOBAL, Order::SeqCst, DEV);
        }
    }

    /// Owner: push at the bottom.
    pub fn push(&self, task: u32) {
        let b = self.bot.load(Order::Relaxed, DEV);
        assert!((b as usize) < self.slots.len(), "deque overflow");
        self.slots[b as usize].store(task, Order::Relaxed, DEV);
        let publish = if self.v == Variant::PushRelaxed { Order::Relaxed } else { Order::Release };
        self.bot.store(b + 1, publish, DEV);
    }

    /// Owner: pop at the bottom.
    pub fn pop(&self) -> Option<u32> {
        let b = self.bot.load(Order::Relaxed, DEV);
        if b == 0 {
            return None;
        }
        let b = b - 1;
        self.bot.store(b, Order::Relaxed, DEV);
        self.sc_fence();
        let old = self.age.load(Order::Relaxed, DEV);
        let task = self.slots[b as usize].load(Order::Relaxed, DEV);
        if b > top(old) || (self.v == Variant::PopNoCas && b == top(old)) {
            return Some(task);
        }
        self.bot.store(0, Order::Relaxed, DEV);
        let new = make_age(tag(old) + 1, 0);
        if b == top(old) && self.age.compare_exchange(old, new, Order::AcqRel, Order::Relaxed, DEV).is_ok() {
            return Some(task);
        }
        self.age.store(new, Order::Release, DEV);
        None
    }

    /// Thief: steal at the top.
    pub fn steal(&self) -> Steal {
        let old = self.age.load(Order::Acquire, DEV);
        self.sc_fence();
        let b = self.bot.load(Order::Acquire, DEV);
        if b <= top(old) {
            return Steal::Empty;
        }
        let task = self.slots[top(old) as usize].load(Order::Relaxed, DEV);
        match self.age.compare_exchange(old, make_age(tag(old), top(old) + 1), Order::AcqRel, Order::Relaxed, DEV) {
            Ok(_) => Steal::Task(task),
            Err(_) => Steal::Abort,
        }
    }
}

/// The shape of a run.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub groups: usize,
    pub items: usize,
    /// Root tasks the host puts in work-group 0's deque before the launch.
    pub host_seeds: usize,
    /// Root tasks work-group 0 creates and pushes at the start of the
    /// kernel (after the host's). The input is split evenly among all roots.
    pub kernel_seeds: usize,
    /// Ranges longer than this are split in two (the right half pushed).
    pub grain: usize,
    /// Capacity of each deque.
    pub capacity: usize,
}

const DONE: u32 = u32::MAX;

/// Sum `input` by work stealing; returns (the total, how many times each
/// task was taken).
pub fn sum(input: &[u32], c: Config, v: Variant) -> (u32, Vec<u32>) {
    let n = input.len();
    let roots = c.host_seeds + c.kernel_seeds;
    let max_tasks = roots + 2 * n.div_ceil(c.grain.max(1)) + 2;
    let data = GlobalBuffer::from_slice(input);
    let (desc_lo, desc_hi) = (GlobalBuffer::<u32>::new(max_tasks), GlobalBuffer::<u32>::new(max_tasks));
    let taken: Vec<AtomicU32> = (0..max_tasks).map(|_| AtomicU32::new(0)).collect();
    let results = GlobalBuffer::<u32>::new(max_tasks);
    let deques: Vec<Deque> = (0..c.groups).map(|_| Deque::new(c.capacity, v)).collect();
    let next_id = AtomicU32::new(0);
    let pending = AtomicU32::new(roots as u32);
    let new_task = |lo: usize, hi: usize| -> u32 {
        let id = next_id.fetch_add(1, Order::Relaxed, DEV);
        assert!((id as usize) < max_tasks, "too many tasks");
        desc_lo.write(id as usize, lo as u32);
        desc_hi.write(id as usize, hi as u32);
        id
    };
    let root = |k: usize| new_task(k * n / roots, (k + 1) * n / roots);
    // The host seeds work-group 0's deque.
    for k in 0..c.host_seeds {
        deques[0].push(root(k));
    }
    launch_with_local(
        NdRange::new([c.groups * c.items], [c.items]),
        |_| (LocalBuffer::<u32>::new(1), LocalBuffer::<u32>::new(c.items)),
        |it, (current, partial)| {
            let (lid, me) = (it.local_id(0), it.group_id(0));
            if me == 0 && lid == 0 {
                for k in c.host_seeds..roots {
                    deques[0].push(root(k));
                }
            }
            loop {
                // Work-item 0 finds a task (or learns that all are done).
                if lid == 0 {
                    let task = loop {
                        if let Some(t) = deques[me].pop() {
                            break t;
                        }
                        let mut found = None;
                        for k in 1..c.groups {
                            if let Steal::Task(t) = deques[(me + k) % c.groups].steal() {
                                found = Some(t);
                                break;
                            }
                        }
                        if let Some(t) = found {
                            break t;
                        }
                        if pending.load(Order::Relaxed, DEV) == 0 {
                            break DONE;
                        }
                        clmm::hint::spin_loop();
                    };
                    if task != DONE {
                        let before = taken[task as usize].fetch_add(1, Order::Relaxed, DEV);
                        assert_eq!(before, 0, "task {task} taken twice");
                    }
                    current.write(0, task);
                }
                it.barrier(FenceFlags::LOCAL | FenceFlags::GLOBAL);
                let task = current.read(0);
                if task == DONE {
                    break;
                }
                let (mut lo, hi) = (desc_lo.read(task as usize) as usize, desc_hi.read(task as usize) as usize);
                // Split off right halves while the range is large.
                let mut end = hi;
                while end - lo > c.grain {
                    let mid = lo + (end - lo) / 2;
                    if lid == 0 {
                        pending.fetch_add(1, Order::Relaxed, DEV);
                        deques[me].push(new_task(mid, end));
                    }
                    end = mid;
                }
                // The group sums [lo, end).
                let mut s = 0u32;
                while lo + lid < end {
                    s = s.wrapping_add(data.read(lo + lid));
                    lo += it.local_size(0);
                }
                partial.write(lid, s);
                it.barrier(FenceFlags::LOCAL);
                if lid == 0 {
                    let s = (0..it.local_size(0)).fold(0u32, |a, i| a.wrapping_add(partial.read(i)));
                    results.write(task as usize, s);
                    pending.fetch_sub(1, Order::Relaxed, DEV);
                }
                it.barrier(FenceFlags::LOCAL);
            }
        },
    );
    let tasks = next_id.load(Order::Relaxed, DEV) as usize;
    let total = (0..tasks).fold(0u32, |a, t| a.wrapping_add(results.read(t)));
    (total, (0..tasks).map(|t| taken[t].load(Order::Relaxed, DEV)).collect())
}

/// The model-checked scenarios: work-group 0 owns the deque, work-group 1
/// steals; one work-item each; tasks of one value (no splitting).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// The host seeds two tasks: a thief can take the first while the owner
    /// pops the second, the race that the seq_cst fences resolve
    /// (`no-sc-fence` breaks it).
    HostTwo,
    /// Work-group 0 pushes one task from the kernel: a push racing with a
    /// steal (`push-relaxed` breaks it), and the owner and a thief racing for
    /// the last element (`pop-no-cas` breaks it).
    KernelOne,
}

impl Scenario {
    pub const ALL: [Scenario; 2] = [Scenario::HostTwo, Scenario::KernelOne];
}

impl Variant {
    /// The scenario whose model check shows the bug (`HostTwo` for the
    /// correct version, which `tests/kernels.rs` also checks in `KernelOne`).
    pub fn scenario(self) -> Scenario {
        match self {
            Variant::Correct | Variant::NoScFence => Scenario::HostTwo,
            Variant::PushRelaxed | Variant::PopNoCas => Scenario::KernelOne,
        }
    }
}

/// The model-checked program of a variant (in its scenario).
pub fn program(v: Variant) -> impl Fn() + Sync {
    program_in(v, v.scenario())
}

/// A variant in a given scenario.
pub fn program_in(v: Variant, s: Scenario) -> impl Fn() + Sync {
    move || {
        let (input, c) = match s {
            Scenario::HostTwo => (vec![1u32, 2], Config { groups: 2, items: 1, host_seeds: 2, kernel_seeds: 0, grain: 1, capacity: 2 }),
            Scenario::KernelOne => (vec![1u32], Config { groups: 2, items: 1, host_seeds: 0, kernel_seeds: 1, grain: 1, capacity: 1 }),
        };
        let (total, taken) = sum(&input, c, v);
        assert_eq!(taken, vec![1; taken.len()], "each task taken once");
        assert_eq!(total, input.iter().sum::<u32>(), "total");
    }
}

fn native() {
    let c = Config { groups: 8, items: 16, host_seeds: 1, kernel_seeds: 3, grain: 64, capacity: 64 };
    let n = 100_000;
    let input: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761) % 1000).collect();
    let t = std::time::Instant::now();
    let (total, taken) = sum(&input, c, Variant::Correct);
    let expect: u32 = input.iter().sum();
    let once = taken.iter().all(|&k| k == 1);
    println!(
        "work-stealing sum of {n} values by {} work-groups x {} work-items: {total} (sequential: {expect}), {} tasks{}: {} in {:?}",
        c.groups,
        c.items,
        taken.len(),
        if once { ", each taken once" } else { ", SOME TAKEN TWICE" },
        if total == expect && once { "correct" } else { "WRONG" },
        t.elapsed()
    );
}

fn check(v: Variant) {
    let scenarios: Vec<Scenario> = if v.is_correct() { Scenario::ALL.to_vec() } else { vec![v.scenario()] };
    for sc in scenarios {
        common::check_program(&format!("{} ({}; scenario {:?})", v.name(), v.describe(), sc), program_in(v, sc));
    }
}

fn main() {
    let variants = common::Variants {
        example: "work_stealing",
        all: &Variant::ALL,
        name: Variant::name,
        describe: Variant::describe,
        is_correct: Variant::is_correct,
    };
    common::main(variants, native, check);
}
