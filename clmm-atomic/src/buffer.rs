//! Non-atomic global and local memory (`global T*`, `local T*`): every
//! element is a location whose accesses are race-checked.

use crate::backend::{self, Access, AllocRegion, LocId, Mode, Op};
use crate::value::Value;
use std::marker::PhantomData;
use std::panic::Location;
use std::sync::atomic::{AtomicU64, Ordering};

enum Store {
    /// Natively, relaxed atomic cells: racy ports stay free of Rust UB.
    Native(Box<[AtomicU64]>),
    Model(LocId),
}

struct Cells<T> {
    store: Store,
    len: usize,
    _t: PhantomData<T>,
}

impl<T: Value> Cells<T> {
    #[track_caller]
    fn new(region: AllocRegion, len: usize, init: &mut dyn FnMut(usize) -> T) -> Self {
        let store = match backend::current() {
            Some(b) => Store::Model(b.alloc(region, len, false, &mut |i| init(i).to_bits(), Location::caller())),
            None => Store::Native((0..len).map(|i| AtomicU64::new(init(i).to_bits())).collect()),
        };
        Cells { store, len, _t: PhantomData }
    }

    #[track_caller]
    fn check(&self, i: usize, what: &str) {
        if i >= self.len {
            panic!("clmm: {what} index {i} out of bounds (length {})", self.len);
        }
    }

    #[track_caller]
    fn read(&self, i: usize, what: &str) -> T {
        self.check(i, what);
        match &self.store {
            Store::Native(c) => T::from_bits(c[i].load(Ordering::Relaxed)),
            Store::Model(base) => {
                let op = Op::Mem { loc: base.offset(i), access: Access::Load, mode: Mode::Plain };
                T::from_bits(crate::atomic::model().op(op, Location::caller()).value)
            }
        }
    }

    #[track_caller]
    fn write(&self, i: usize, v: T, what: &str) {
        self.check(i, what);
        match &self.store {
            Store::Native(c) => c[i].store(v.to_bits(), Ordering::Relaxed),
            Store::Model(base) => {
                let op = Op::Mem { loc: base.offset(i), access: Access::Store(v.to_bits()), mode: Mode::Plain };
                crate::atomic::model().op(op, Location::caller());
            }
        }
    }
}

/// A buffer of non-atomic global memory (`global T*`).
pub struct GlobalBuffer<T: Value> {
    cells: Cells<T>,
}

impl<T: Value> GlobalBuffer<T> {
    /// `len` elements, zero-initialised (all bits zero).
    #[track_caller]
    pub fn new(len: usize) -> Self {
        GlobalBuffer { cells: Cells::new(AllocRegion::Global, len, &mut |_| T::from_bits(0)) }
    }
    /// A buffer holding a copy of `data`.
    #[track_caller]
    pub fn from_slice(data: &[T]) -> Self {
        GlobalBuffer { cells: Cells::new(AllocRegion::Global, data.len(), &mut |i| data[i]) }
    }
    /// `len` elements, element `i` initialised to `f(i)`.
    #[track_caller]
    pub fn from_fn(len: usize, mut f: impl FnMut(usize) -> T) -> Self {
        GlobalBuffer { cells: Cells::new(AllocRegion::Global, len, &mut f) }
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.cells.len
    }
    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.cells.len == 0
    }
    /// Read element `i` (a non-atomic load).
    #[track_caller]
    pub fn read(&self, i: usize) -> T {
        self.cells.read(i, "GlobalBuffer")
    }
    /// Write element `i` (a non-atomic store).
    #[track_caller]
    pub fn write(&self, i: usize, v: T) {
        self.cells.write(i, v, "GlobalBuffer")
    }
    /// Read every element in order (one non-atomic load each).
    #[track_caller]
    pub fn to_vec(&self) -> Vec<T> {
        (0..self.len()).map(|i| self.cells.read(i, "GlobalBuffer")).collect()
    }
}

/// A shared virtual memory buffer (`clSVMAlloc`): global memory that host
/// threads and kernels address alike (spec excerpt
/// `004_8d269728d13116e5.txt`, "shared virtual memory").
///
/// * [`SvmBuffer::fine`]: fine-grained, with SVM atomics support
///   (`CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS`, the `.cat`
///   model's `fga`): host and kernels share it while a kernel runs, and
///   atomics on it at `memory_scope_all_svm_devices` (created with
///   `AtomicU32::new_svm` and friends) synchronise the host with kernels.
/// * [`SvmBuffer::coarse`]: coarse-grained, consistent only at
///   synchronisation points (enqueue, event waits, `finish`): a host access
///   while a kernel that uses the buffer may run is reported as a data race,
///   even on another element of the buffer.
///
/// Element accesses are non-atomic and race-checked like
/// [`GlobalBuffer`]'s.
pub struct SvmBuffer<T: Value> {
    cells: Cells<T>,
    fine: bool,
}

impl<T: Value> SvmBuffer<T> {
    /// A fine-grained SVM buffer with atomics support, `len` elements,
    /// zero-initialised.
    #[track_caller]
    pub fn fine(len: usize) -> Self {
        Self::fine_from_fn(len, |_| T::from_bits(0))
    }
    /// A fine-grained SVM buffer with atomics support, element `i`
    /// initialised to `f(i)`.
    #[track_caller]
    pub fn fine_from_fn(len: usize, mut f: impl FnMut(usize) -> T) -> Self {
        SvmBuffer { cells: Cells::new(AllocRegion::GlobalFga, len, &mut f), fine: true }
    }
    /// A coarse-grained SVM buffer, `len` elements, zero-initialised.
    #[track_caller]
    pub fn coarse(len: usize) -> Self {
        Self::coarse_from_fn(len, |_| T::from_bits(0))
    }
    /// A coarse-grained SVM buffer, element `i` initialised to `f(i)`.
    #[track_caller]
    pub fn coarse_from_fn(len: usize, mut f: impl FnMut(usize) -> T) -> Self {
        SvmBuffer { cells: Cells::new(AllocRegion::SvmCoarse, len, &mut f), fine: false }
    }
    /// Whether it is fine-grained.
    pub fn is_fine_grained(&self) -> bool {
        self.fine
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.cells.len
    }
    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.cells.len == 0
    }
    /// Read element `i` (a non-atomic load).
    #[track_caller]
    pub fn read(&self, i: usize) -> T {
        self.cells.read(i, "SvmBuffer")
    }
    /// Write element `i` (a non-atomic store).
    #[track_caller]
    pub fn write(&self, i: usize, v: T) {
        self.cells.write(i, v, "SvmBuffer")
    }
}

impl<T: Value> std::fmt::Debug for SvmBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SvmBuffer({}-grained, len {})", if self.fine { "fine" } else { "coarse" }, self.len())
    }
}

/// A buffer of non-atomic local memory (`local T*`), shared by the
/// work-items of one work-group. Create it inside the local initialiser of
/// `launch_with_local`; touching it from another work-group is reported.
pub struct LocalBuffer<T: Value> {
    cells: Cells<T>,
}

impl<T: Value> LocalBuffer<T> {
    /// `len` elements, zero-initialised.
    #[track_caller]
    pub fn new(len: usize) -> Self {
        Self::from_fn(len, |_| T::from_bits(0))
    }
    /// `len` elements, element `i` initialised to `f(i)`.
    #[track_caller]
    pub fn from_fn(len: usize, mut f: impl FnMut(usize) -> T) -> Self {
        if let Some(b) = backend::current() {
            if !b.in_local_init() {
                panic!("clmm: LocalBuffer::new outside a local initialiser; create local memory in the `init` closure of `launch_with_local`");
            }
        }
        LocalBuffer { cells: Cells::new(AllocRegion::Local, len, &mut f) }
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.cells.len
    }
    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.cells.len == 0
    }
    /// Read element `i` (a non-atomic load).
    #[track_caller]
    pub fn read(&self, i: usize) -> T {
        self.cells.read(i, "LocalBuffer")
    }
    /// Write element `i` (a non-atomic store).
    #[track_caller]
    pub fn write(&self, i: usize, v: T) {
        self.cells.write(i, v, "LocalBuffer")
    }
}

impl<T: Value> std::fmt::Debug for GlobalBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GlobalBuffer(len {})", self.len())
    }
}
impl<T: Value> std::fmt::Debug for LocalBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LocalBuffer(len {})", self.len())
    }
}
