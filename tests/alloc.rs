//! No heap allocation per operation on the fast path (issue 4): once the
//! explorer's buffers have grown (they are kept across checks on a
//! thread), a unit that performs twice as many operations allocates no
//! more, not once or more per operation. One test
//! in its own binary: it counts every allocation of the process.

use clmm::{launch, AtomicI32, Builder, GlobalBuffer, NdRange, Order, Scope};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator, counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        unsafe { System.realloc(ptr, layout, size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations of one check of a work-item doing `rounds` rounds of an
/// atomic load, a fetch_add, a non-atomic write and read (one execution:
/// the model has no other).
fn allocations(rounds: i32) -> u64 {
    let before = ALLOCATIONS.load(Relaxed);
    let s = Builder::new()
        .check(move || {
            let x = AtomicI32::new(0);
            let data = GlobalBuffer::<i32>::new(1);
            launch(NdRange::new([1], [1]), |_| {
                for i in 0..rounds {
                    assert_eq!(x.load(Order::Relaxed, Scope::Device), i);
                    x.fetch_add(1, Order::AcqRel, Scope::Device);
                    data.write(0, i);
                    assert_eq!(data.read(0), i);
                }
            });
        })
        .expect("a correct program");
    assert_eq!((s.complete, s.blocked, s.pruned), (1, 0, 0), "{s}");
    ALLOCATIONS.load(Relaxed) - before
}

#[test]
fn operations_do_not_allocate() {
    // Warm the caches: the process-wide stacks and environment, and this
    // thread's explorer buffers, grown here as large as below.
    allocations(400);
    let (a, b) = (allocations(200), allocations(400));
    // 800 more operations, and nothing to grow.
    assert!(b <= a + 40, "{a} allocations for 800 operations, {b} for 1600");
}
