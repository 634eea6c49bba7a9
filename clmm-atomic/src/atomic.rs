//! Scoped atomics (OpenCL C 2.0 §6.13.11): every operation takes a
//! [`Order`] and a [`Scope`]. Inside `clmm::model` each operation is an
//! event handed to the checker; outside, it is the `std` atomic operation.

use crate::backend::{self, Access, AllocRegion, LocId, Mode, Op};
use crate::order::{Order, Scope};
use crate::value::{NumTy, RmwOp, Value};
use std::panic::Location;
use std::sync::atomic::Ordering;

/// The `std` ordering used by the native backend.
pub(crate) fn std_order(o: Order) -> Ordering {
    match o {
        Order::Relaxed => Ordering::Relaxed,
        Order::Acquire => Ordering::Acquire,
        Order::Release => Ordering::Release,
        Order::AcqRel => Ordering::AcqRel,
        Order::SeqCst => Ordering::SeqCst,
    }
}

#[track_caller]
pub(crate) fn check_load_order(o: Order) {
    if matches!(o, Order::Release | Order::AcqRel) {
        panic!("clmm: a load cannot have {}; use relaxed, acquire or seq_cst", o.cl_name());
    }
}

#[track_caller]
pub(crate) fn check_store_order(o: Order) {
    if matches!(o, Order::Acquire | Order::AcqRel) {
        panic!("clmm: a store cannot have {}; use relaxed, release or seq_cst", o.cl_name());
    }
}

/// The orders a compare-exchange may take (OpenCL C 2.0 §6.13.11.7.5,
/// after C11 7.17.7.4: "The failure argument shall not be
/// memory_order_release nor memory_order_acq_rel. The failure argument
/// shall be no stronger than the success argument"). A failed
/// compare-exchange is a load with the failure order, so the failure order
/// is compared with what the success order does as a load: relaxed and
/// release acquire nothing, acquire and acq_rel acquire, seq_cst is seq_cst.
#[track_caller]
fn check_failure_order(success: Order, failure: Order) {
    if matches!(failure, Order::Release | Order::AcqRel) {
        panic!("clmm: the failure order of a compare-exchange cannot be {}", failure.cl_name());
    }
    let as_load = |o: Order| match o {
        Order::Relaxed | Order::Release => 0,
        Order::Acquire | Order::AcqRel => 1,
        Order::SeqCst => 2,
    };
    if as_load(failure) > as_load(success) {
        panic!(
            "clmm: the failure order of a compare-exchange ({}) cannot be stronger than its success order ({})",
            failure.cl_name(),
            success.cl_name()
        );
    }
}

/// Allocate one model location for an atomic created inside a model run.
#[track_caller]
pub(crate) fn alloc_atomic(b: &dyn backend::Backend, init: u64) -> LocId {
    let region = if b.in_local_init() { AllocRegion::Local } else { AllocRegion::Global };
    b.alloc(region, 1, true, &mut |_| init, Location::caller())
}

#[track_caller]
pub(crate) fn model_op(b: &dyn backend::Backend, loc: LocId, access: Access, order: Order, scope: Scope) -> backend::Reply {
    b.op(Op::Mem { loc, access, mode: Mode::Atomic(order, scope) }, Location::caller())
}

macro_rules! atomic_int {
    ($(#[$m:meta])* $name:ident, $t:ty, $std:ty, $numty:expr) => {
        $(#[$m])*
        pub struct $name {
            repr: Repr<$std>,
        }

        impl $name {
            /// A new atomic with initial value `v`: in global memory, or in the
            /// local memory of the work-group whose local initialiser is
            /// running (`launch_with_local`).
            #[track_caller]
            pub fn new(v: $t) -> Self {
                match backend::current() {
                    Some(b) => $name { repr: Repr::Model(alloc_atomic(b, v.to_bits())) },
                    None => $name { repr: Repr::Native(<$std>::new(v)) },
                }
            }

            /// A new atomic with initial value `v` in fine-grained SVM with
            /// atomics support (`clSVMAlloc` with
            /// `CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS`): host
            /// threads and running kernels synchronise through it at
            /// `memory_scope_all_svm_devices`.
            #[track_caller]
            pub fn new_svm(v: $t) -> Self {
                match backend::current() {
                    Some(b) => $name { repr: Repr::Model(b.alloc(AllocRegion::GlobalFga, 1, true, &mut |_| v.to_bits(), Location::caller())) },
                    None => $name { repr: Repr::Native(<$std>::new(v)) },
                }
            }

            /// `atomic_load_explicit(obj, order, scope)`
            #[track_caller]
            pub fn load(&self, order: Order, scope: Scope) -> $t {
                check_load_order(order);
                match &self.repr {
                    Repr::Native(a) => a.load(std_order(order)),
                    Repr::Model(loc) => <$t>::from_bits(model_op(model(), *loc, Access::Load, order, scope).value),
                }
            }

            /// `atomic_store_explicit(obj, v, order, scope)`
            #[track_caller]
            pub fn store(&self, v: $t, order: Order, scope: Scope) {
                check_store_order(order);
                match &self.repr {
                    Repr::Native(a) => a.store(v, std_order(order)),
                    Repr::Model(loc) => {
                        model_op(model(), *loc, Access::Store(v.to_bits()), order, scope);
                    }
                }
            }

            #[track_caller]
            fn rmw(&self, op: RmwOp, v: $t, order: Order, scope: Scope) -> $t {
                match &self.repr {
                    Repr::Native(a) => {
                        let o = std_order(order);
                        match op {
                            RmwOp::Xchg => a.swap(v, o),
                            RmwOp::Add => a.fetch_add(v, o),
                            RmwOp::Sub => a.fetch_sub(v, o),
                            RmwOp::And => a.fetch_and(v, o),
                            RmwOp::Or => a.fetch_or(v, o),
                            RmwOp::Xor => a.fetch_xor(v, o),
                            RmwOp::Min => a.fetch_min(v, o),
                            RmwOp::Max => a.fetch_max(v, o),
                        }
                    }
                    Repr::Model(loc) => <$t>::from_bits(
                        model_op(model(), *loc, Access::Rmw(op, $numty, v.to_bits()), order, scope).value,
                    ),
                }
            }

            /// `atomic_exchange_explicit`
            #[track_caller]
            pub fn exchange(&self, v: $t, order: Order, scope: Scope) -> $t {
                self.rmw(RmwOp::Xchg, v, order, scope)
            }
            /// `atomic_fetch_add_explicit` (wrapping)
            #[track_caller]
            pub fn fetch_add(&self, v: $t, order: Order, scope: Scope) -> $t {
                self.rmw(RmwOp::Add, v, order, scope)
            }
            /// `atomic_fetch_sub_explicit` (wrapping)
            #[track_caller]
            pub fn fetch_sub(&self, v: $t, order: Order, scope: Scope) -> $t {
                self.rmw(RmwOp::Sub, v, order, scope)
            }
            /// `atomic_fetch_and_explicit`
            #[track_caller]
            pub fn fetch_and(&self, v: $t, order: Order, scope: Scope) -> $t {
                self.rmw(RmwOp::And, v, order, scope)
            }
            /// `atomic_fetch_or_explicit`
            #[track_caller]
            pub fn fetch_or(&self, v: $t, order: Order, scope: Scope) -> $t {
                self.rmw(RmwOp::Or, v, order, scope)
            }
            /// `atomic_fetch_xor_explicit`
            #[track_caller]
            pub fn fetch_xor(&self, v: $t, order: Order, scope: Scope) -> $t {
                self.rmw(RmwOp::Xor, v, order, scope)
            }
            /// `atomic_fetch_min_explicit`
            #[track_caller]
            pub fn fetch_min(&self, v: $t, order: Order, scope: Scope) -> $t {
                self.rmw(RmwOp::Min, v, order, scope)
            }
            /// `atomic_fetch_max_explicit`
            #[track_caller]
            pub fn fetch_max(&self, v: $t, order: Order, scope: Scope) -> $t {
                self.rmw(RmwOp::Max, v, order, scope)
            }

            /// `atomic_compare_exchange_strong_explicit`: `Ok(old)` when the
            /// value was `current` and is now `new`, `Err(actual)` otherwise.
            #[track_caller]
            pub fn compare_exchange(&self, current: $t, new: $t, success: Order, failure: Order, scope: Scope) -> Result<$t, $t> {
                self.cas(current, new, success, failure, scope, false)
            }

            /// `atomic_compare_exchange_weak_explicit`: like
            /// [`compare_exchange`](Self::compare_exchange) but may fail even
            /// when the value equals `current` (the checker explores that).
            #[track_caller]
            pub fn compare_exchange_weak(&self, current: $t, new: $t, success: Order, failure: Order, scope: Scope) -> Result<$t, $t> {
                self.cas(current, new, success, failure, scope, true)
            }

            #[track_caller]
            fn cas(&self, current: $t, new: $t, success: Order, failure: Order, scope: Scope, weak: bool) -> Result<$t, $t> {
                check_failure_order(success, failure);
                match &self.repr {
                    Repr::Native(a) => {
                        if weak {
                            a.compare_exchange_weak(current, new, std_order(success), std_order(failure))
                        } else {
                            a.compare_exchange(current, new, std_order(success), std_order(failure))
                        }
                    }
                    Repr::Model(loc) => {
                        let access = Access::Cas { expected: current.to_bits(), desired: new.to_bits(), failure, weak };
                        let r = model_op(model(), *loc, access, success, scope);
                        let v = <$t>::from_bits(r.value);
                        if r.ok { Ok(v) } else { Err(v) }
                    }
                }
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match &self.repr {
                    Repr::Native(a) => write!(f, "{}({:?})", stringify!($name), a),
                    Repr::Model(l) => write!(f, "{}(location {})", stringify!($name), l.0),
                }
            }
        }
    };
}

/// Native or model representation of an atomic.
pub(crate) enum Repr<N> {
    Native(N),
    Model(LocId),
}

#[track_caller]
pub(crate) fn model() -> &'static dyn backend::Backend {
    backend::current().unwrap_or_else(|| {
        panic!("clmm: an object created inside `clmm::model` was used after the model run ended")
    })
}

atomic_int!(
    /// `atomic_int`: a 32-bit signed atomic.
    AtomicI32, i32, std::sync::atomic::AtomicI32, NumTy::I32);
atomic_int!(
    /// `atomic_uint`: a 32-bit unsigned atomic.
    AtomicU32, u32, std::sync::atomic::AtomicU32, NumTy::U32);
atomic_int!(
    /// `atomic_long`: a 64-bit signed atomic.
    AtomicI64, i64, std::sync::atomic::AtomicI64, NumTy::I64);
atomic_int!(
    /// `atomic_ulong`: a 64-bit unsigned atomic.
    AtomicU64, u64, std::sync::atomic::AtomicU64, NumTy::U64);
atomic_int!(
    /// `atomic_size_t`: a pointer-sized unsigned atomic.
    AtomicUsize, usize, std::sync::atomic::AtomicUsize, NumTy::U64);

/// `atomic_float`: a 32-bit float atomic (load, store, exchange,
/// compare-exchange, fetch add/sub/min/max).
pub struct AtomicF32 {
    repr: Repr<std::sync::atomic::AtomicU32>,
}

impl AtomicF32 {
    /// A new atomic float (global memory, or local inside a local initialiser).
    #[track_caller]
    pub fn new(v: f32) -> Self {
        match backend::current() {
            Some(b) => AtomicF32 { repr: Repr::Model(alloc_atomic(b, Value::to_bits(v))) },
            None => AtomicF32 { repr: Repr::Native(std::sync::atomic::AtomicU32::new(v.to_bits())) },
        }
    }
    /// `atomic_load_explicit`
    #[track_caller]
    pub fn load(&self, order: Order, scope: Scope) -> f32 {
        check_load_order(order);
        match &self.repr {
            Repr::Native(a) => f32::from_bits(a.load(std_order(order))),
            Repr::Model(l) => <f32 as Value>::from_bits(model_op(model(), *l, Access::Load, order, scope).value),
        }
    }
    /// `atomic_store_explicit`
    #[track_caller]
    pub fn store(&self, v: f32, order: Order, scope: Scope) {
        check_store_order(order);
        match &self.repr {
            Repr::Native(a) => a.store(v.to_bits(), std_order(order)),
            Repr::Model(l) => {
                model_op(model(), *l, Access::Store(Value::to_bits(v)), order, scope);
            }
        }
    }
    #[track_caller]
    fn rmw(&self, op: RmwOp, v: f32, order: Order, scope: Scope) -> f32 {
        match &self.repr {
            Repr::Native(a) => {
                let o = std_order(order);
                let prev = a
                    .fetch_update(o, Ordering::Relaxed, |old| Some(RmwOp::apply(op, NumTy::F32, old as u64, Value::to_bits(v)) as u32))
                    .unwrap_or_else(|x| x);
                f32::from_bits(prev)
            }
            Repr::Model(l) => <f32 as Value>::from_bits(
                model_op(model(), *l, Access::Rmw(op, NumTy::F32, Value::to_bits(v)), order, scope).value,
            ),
        }
    }
    /// `atomic_exchange_explicit`
    #[track_caller]
    pub fn exchange(&self, v: f32, order: Order, scope: Scope) -> f32 {
        self.rmw(RmwOp::Xchg, v, order, scope)
    }
    /// `atomic_fetch_add_explicit`
    #[track_caller]
    pub fn fetch_add(&self, v: f32, order: Order, scope: Scope) -> f32 {
        self.rmw(RmwOp::Add, v, order, scope)
    }
    /// `atomic_fetch_sub_explicit`
    #[track_caller]
    pub fn fetch_sub(&self, v: f32, order: Order, scope: Scope) -> f32 {
        self.rmw(RmwOp::Sub, v, order, scope)
    }
    /// `atomic_fetch_min_explicit`
    #[track_caller]
    pub fn fetch_min(&self, v: f32, order: Order, scope: Scope) -> f32 {
        self.rmw(RmwOp::Min, v, order, scope)
    }
    /// `atomic_fetch_max_explicit`
    #[track_caller]
    pub fn fetch_max(&self, v: f32, order: Order, scope: Scope) -> f32 {
        self.rmw(RmwOp::Max, v, order, scope)
    }
    /// `atomic_compare_exchange_strong_explicit` (bitwise comparison)
    #[track_caller]
    pub fn compare_exchange(&self, current: f32, new: f32, success: Order, failure: Order, scope: Scope) -> Result<f32, f32> {
        check_failure_order(success, failure);
        match &self.repr {
            Repr::Native(a) => a
                .compare_exchange(current.to_bits(), new.to_bits(), std_order(success), std_order(failure))
                .map(f32::from_bits)
                .map_err(f32::from_bits),
            Repr::Model(l) => {
                let access = Access::Cas { expected: Value::to_bits(current), desired: Value::to_bits(new), failure, weak: false };
                let r = model_op(model(), *l, access, success, scope);
                let v = <f32 as Value>::from_bits(r.value);
                if r.ok { Ok(v) } else { Err(v) }
            }
        }
    }
}

impl std::fmt::Debug for AtomicF32 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.repr {
            Repr::Native(a) => write!(f, "AtomicF32({})", f32::from_bits(a.load(Ordering::Relaxed))),
            Repr::Model(l) => write!(f, "AtomicF32(location {})", l.0),
        }
    }
}

/// `atomic_flag`: `test_and_set` and `clear`.
pub struct AtomicFlag {
    repr: Repr<std::sync::atomic::AtomicBool>,
}

impl AtomicFlag {
    /// A new, clear flag (`ATOMIC_FLAG_INIT`).
    #[track_caller]
    pub fn new() -> Self {
        match backend::current() {
            Some(b) => AtomicFlag { repr: Repr::Model(alloc_atomic(b, 0)) },
            None => AtomicFlag { repr: Repr::Native(std::sync::atomic::AtomicBool::new(false)) },
        }
    }
    /// `atomic_flag_test_and_set_explicit`: sets the flag, returns whether it
    /// was set before.
    #[track_caller]
    pub fn test_and_set(&self, order: Order, scope: Scope) -> bool {
        match &self.repr {
            Repr::Native(a) => a.swap(true, std_order(order)),
            Repr::Model(l) => model_op(model(), *l, Access::Rmw(RmwOp::Xchg, NumTy::U32, 1), order, scope).value != 0,
        }
    }
    /// `atomic_flag_clear_explicit`
    #[track_caller]
    pub fn clear(&self, order: Order, scope: Scope) {
        check_store_order(order);
        match &self.repr {
            Repr::Native(a) => a.store(false, std_order(order)),
            Repr::Model(l) => {
                model_op(model(), *l, Access::Store(0), order, scope);
            }
        }
    }
}

impl Default for AtomicFlag {
    #[track_caller]
    fn default() -> Self {
        AtomicFlag::new()
    }
}

impl std::fmt::Debug for AtomicFlag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.repr {
            Repr::Native(a) => write!(f, "AtomicFlag({:?})", a),
            Repr::Model(l) => write!(f, "AtomicFlag(location {})", l.0),
        }
    }
}
