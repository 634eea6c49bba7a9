//! Host threads, command queues, events and shared virtual memory.

use clmm::host::{self, Context, QueueOrder};
use clmm::{AtomicU32, Builder, FailureKind, NdRange, Order, Scope, SvmBuffer};

fn unique() -> Builder {
    Builder::new().check_unique(true)
}

#[test]
fn smoke_enqueue_wait() {
    let s = unique()
        .check(|| {
            let data = SvmBuffer::<u32>::coarse(1);
            let ctx = Context::new(1);
            host::scope(|s| {
                let q = s.queue(&ctx, 0, QueueOrder::OutOfOrder);
                data.write(0, 1);
                let e = q.enqueue_kernel(NdRange::new([1], [1]), &[], |_| {
                    assert_eq!(data.read(0), 1);
                    data.write(0, 2);
                });
                e.wait();
                assert_eq!(data.read(0), 2);
            });
        })
        .unwrap();
    assert_eq!(s.complete, 1);
}
