//! The CUDA-by-Example lock (Sanders and Kandrot, appendix A.2): CAS to
//! take it, exchange to free it; shared by the spin-lock and hash-table
//! examples.

use clmm::{AtomicU32, Order, Scope};

/// The lock, with the orders and scope its operations use.
pub struct Lock {
    mutex: AtomicU32,
    acquire: Order,
    release: Order,
    scope: Scope,
}

impl Lock {
    pub fn new(acquire: Order, release: Order, scope: Scope) -> Lock {
        Lock { mutex: AtomicU32::new(0), acquire, release, scope }
    }
    pub fn lock(&self) {
        while self.mutex.compare_exchange(0, 1, self.acquire, Order::Relaxed, self.scope).is_err() {
            clmm::hint::spin_loop();
        }
    }
    pub fn unlock(&self) {
        self.mutex.exchange(0, self.release, self.scope);
    }
}
