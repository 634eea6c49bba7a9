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
        self.read_at(i, what, Location::caller())
    }

    #[track_caller]
    fn write(&self, i: usize, v: T, what: &str) {
        self.write_at(i, v, what, Location::caller())
    }

    /// A non-atomic load of element `i`, attributed to `site`.
    #[track_caller]
    pub(crate) fn read_at(&self, i: usize, what: &str, site: &'static Location<'static>) -> T {
        self.check(i, what);
        match &self.store {
            Store::Native(c) => T::from_bits(c[i].load(Ordering::Relaxed)),
            Store::Model(base) => {
                let op = Op::Mem { loc: base.offset(i), access: Access::Load, mode: Mode::Plain };
                T::from_bits(crate::atomic::model().op(op, site).value)
            }
        }
    }

    /// A non-atomic store to element `i`, attributed to `site`.
    #[track_caller]
    pub(crate) fn write_at(&self, i: usize, v: T, what: &str, site: &'static Location<'static>) {
        self.check(i, what);
        match &self.store {
            Store::Native(c) => c[i].store(v.to_bits(), Ordering::Relaxed),
            Store::Model(base) => {
                let op = Op::Mem { loc: base.offset(i), access: Access::Store(v.to_bits()), mode: Mode::Plain };
                crate::atomic::model().op(op, site);
            }
        }
    }
}

/// A region of a buffer mapped and not unmapped yet (for the
/// `CL_INVALID_OPERATION` checks of `enqueue_map_buffer`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LiveMap {
    /// The mapping thread: its unit in the model, a hash of its id natively.
    pub owner: u64,
    /// The mapping's number (unique in the buffer).
    pub id: u64,
    pub start: usize,
    pub end: usize,
    pub write: bool,
}

/// The mappings of a buffer that are not unmapped yet (an implementation
/// detail of [`MemObject`]).
#[doc(hidden)]
#[derive(Default)]
pub struct Maps {
    live: std::sync::Mutex<(u64, Vec<LiveMap>)>,
}

impl Maps {
    /// Register a mapping of `start..end` by `owner`; an error naming the
    /// conflict when it overlaps a live mapping of the same thread and one
    /// of the two maps for writing.
    pub(crate) fn map(&self, owner: u64, start: usize, end: usize, write: bool) -> Result<u64, String> {
        let mut l = self.live.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = l.1.iter().find(|m| m.owner == owner && m.start < end && start < m.end && (m.write || write)) {
            return Err(format!(
                "elements {start}..{end} mapped {} while elements {}..{} of the same buffer are still mapped {} (mapping overlapping regions for writing is CL_INVALID_OPERATION; unmap first)",
                if write { "for writing" } else { "for reading" },
                m.start,
                m.end,
                if m.write { "for writing" } else { "for reading" }
            ));
        }
        l.0 += 1;
        let id = l.0;
        l.1.push(LiveMap { owner, id, start, end, write });
        Ok(id)
    }

    /// Forget mapping `id` (its unmap was enqueued).
    pub(crate) fn unmap(&self, id: u64) {
        let mut l = self.live.lock().unwrap_or_else(|e| e.into_inner());
        l.1.retain(|m| m.id != id);
    }
}

/// What a memory object is, for map and copy commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemKind {
    /// A `cl_mem` buffer ([`GlobalBuffer`]).
    Buffer,
    /// A coarse-grained SVM buffer.
    SvmCoarse,
    /// A fine-grained SVM buffer (with or without atomics support).
    SvmFine,
}

mod sealed {
    pub trait Sealed {}
}

/// A memory object that commands can read and write: [`GlobalBuffer`] (a
/// `cl_mem` buffer: `clEnqueueReadBuffer`, `clEnqueueWriteBuffer`,
/// `clEnqueueMapBuffer`) and [`SvmBuffer`] (`clEnqueueSVMMemcpy`,
/// `clEnqueueSVMMap`). Implemented by clmm's buffers only.
pub trait MemObject<T: Value>: sealed::Sealed + Sync {
    /// Number of elements.
    fn mem_len(&self) -> usize;
    /// What it is.
    fn mem_kind(&self) -> MemKind;
    #[doc(hidden)]
    fn mem_read(&self, i: usize, site: &'static Location<'static>) -> T;
    #[doc(hidden)]
    fn mem_write(&self, i: usize, v: T, site: &'static Location<'static>);
    #[doc(hidden)]
    fn mem_maps(&self) -> &Maps;
}

/// Memory of the host program (`malloc`'ed, not a memory object): the host
/// pointer of read, write and map commands (`ptr` of `clEnqueueReadBuffer`
/// and `clEnqueueWriteBuffer`). Host threads and commands access it;
/// kernels cannot (a work-item touching it is reported). Every element is a
/// non-atomic location whose accesses are race-checked, so a host access
/// to the destination of a non-blocking read before its event completes is
/// a data race with the command's write.
pub struct HostBuffer<T: Value> {
    cells: Cells<T>,
}

/// The unit of the calling thread (model runs): its id, with bit 63 set
/// for a work-item.
#[track_caller]
pub(crate) fn current_unit() -> u64 {
    crate::host::call(backend::HostOp::CurrentUnit, Location::caller())
}

impl<T: Value> HostBuffer<T> {
    /// `len` elements, zero-initialised.
    #[track_caller]
    pub fn new(len: usize) -> Self {
        HostBuffer { cells: Cells::new(AllocRegion::Host, len, &mut |_| T::from_bits(0)) }
    }
    /// A copy of `data`.
    #[track_caller]
    pub fn from_slice(data: &[T]) -> Self {
        HostBuffer { cells: Cells::new(AllocRegion::Host, data.len(), &mut |i| data[i]) }
    }
    /// `len` elements, element `i` initialised to `f(i)`.
    #[track_caller]
    pub fn from_fn(len: usize, mut f: impl FnMut(usize) -> T) -> Self {
        HostBuffer { cells: Cells::new(AllocRegion::Host, len, &mut f) }
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.cells.len
    }
    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.cells.len == 0
    }
    #[track_caller]
    fn host_only(&self) {
        if backend::in_model() && current_unit() & backend::WORK_ITEM != 0 {
            panic!("clmm: host memory (a HostBuffer) accessed by a work-item: kernels cannot access host memory; copy it into a buffer (enqueue_write_buffer), map a buffer, or use an SVM buffer");
        }
    }
    /// Read element `i` (a non-atomic load).
    #[track_caller]
    pub fn read(&self, i: usize) -> T {
        self.host_only();
        self.cells.read(i, "HostBuffer")
    }
    /// Write element `i` (a non-atomic store).
    #[track_caller]
    pub fn write(&self, i: usize, v: T) {
        self.host_only();
        self.cells.write(i, v, "HostBuffer")
    }
    /// Read every element in order (one non-atomic load each, attributed
    /// to the caller).
    #[track_caller]
    pub fn to_vec(&self) -> Vec<T> {
        self.host_only();
        let site = Location::caller();
        (0..self.len()).map(|i| self.cells.read_at(i, "HostBuffer", site)).collect()
    }
    pub(crate) fn read_at(&self, i: usize, site: &'static Location<'static>) -> T {
        self.cells.read_at(i, "HostBuffer", site)
    }
    pub(crate) fn write_at(&self, i: usize, v: T, site: &'static Location<'static>) {
        self.cells.write_at(i, v, "HostBuffer", site)
    }
}

impl<T: Value> std::fmt::Debug for HostBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HostBuffer(len {})", self.len())
    }
}

/// A buffer of non-atomic global memory (`global T*`; on the host side a
/// `cl_mem` buffer).
pub struct GlobalBuffer<T: Value> {
    cells: Cells<T>,
    maps: Maps,
}

impl<T: Value> GlobalBuffer<T> {
    /// `len` elements, zero-initialised (all bits zero).
    #[track_caller]
    pub fn new(len: usize) -> Self {
        GlobalBuffer { cells: Cells::new(AllocRegion::Global, len, &mut |_| T::from_bits(0)), maps: Maps::default() }
    }
    /// A buffer holding a copy of `data`.
    #[track_caller]
    pub fn from_slice(data: &[T]) -> Self {
        GlobalBuffer { cells: Cells::new(AllocRegion::Global, data.len(), &mut |i| data[i]), maps: Maps::default() }
    }
    /// `len` elements, element `i` initialised to `f(i)`.
    #[track_caller]
    pub fn from_fn(len: usize, mut f: impl FnMut(usize) -> T) -> Self {
        GlobalBuffer { cells: Cells::new(AllocRegion::Global, len, &mut f), maps: Maps::default() }
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
    /// Read every element in order (one non-atomic load each, attributed
    /// to the caller).
    #[track_caller]
    pub fn to_vec(&self) -> Vec<T> {
        let site = Location::caller();
        (0..self.len()).map(|i| self.cells.read_at(i, "GlobalBuffer", site)).collect()
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
/// * [`SvmBuffer::fine_without_atomics`]: fine-grained without atomics
///   support (`CL_MEM_SVM_FINE_GRAIN_BUFFER` alone): shared element by
///   element, consistent only at synchronisation points (no map needed);
///   SVM atomics do not order it between the host and kernels.
/// * [`SvmBuffer::coarse`]: coarse-grained, consistent only at
///   synchronisation points (enqueue, event waits, `finish`): a host access
///   while a kernel that uses the buffer may run is reported as a data race,
///   even on another element of the buffer.
///
/// Element accesses are non-atomic and race-checked like
/// [`GlobalBuffer`]'s.
pub struct SvmBuffer<T: Value> {
    cells: Cells<T>,
    /// `GlobalFga`, `SvmFine` or `SvmCoarse`: its granularity and atomics
    /// support.
    region: AllocRegion,
    maps: Maps,
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
        Self::in_region(AllocRegion::GlobalFga, len, &mut f)
    }
    /// A fine-grained SVM buffer *without* atomics support
    /// (`CL_MEM_SVM_FINE_GRAIN_BUFFER` alone), `len` elements,
    /// zero-initialised: shared with kernels element by element, so the
    /// host and a running kernel may read one element concurrently and
    /// write different elements concurrently, but a host access and a
    /// work-item access to the same element, one a write, race unless a
    /// synchronisation point (enqueue, event wait, `finish`) orders them;
    /// SVM atomics on other memory do not order it (spec excerpt
    /// `004_8d269728d13116e5.txt`: "if fine-grained SVM is used but without
    /// support for the OpenCL 2.0 atomic operations, then the host and
    /// devices can concurrently read the same memory locations and can
    /// concurrently update non-overlapping memory regions, but attempts to
    /// update the same memory locations are undefined. Memory consistency
    /// is guaranteed at the OpenCL synchronization points without the need
    /// for calls to clEnqueueMapBuffer and clEnqueueUnmapMemObject").
    #[track_caller]
    pub fn fine_without_atomics(len: usize) -> Self {
        Self::fine_without_atomics_from_fn(len, |_| T::from_bits(0))
    }
    /// [`SvmBuffer::fine_without_atomics`], element `i` initialised to
    /// `f(i)`.
    #[track_caller]
    pub fn fine_without_atomics_from_fn(len: usize, mut f: impl FnMut(usize) -> T) -> Self {
        Self::in_region(AllocRegion::SvmFine, len, &mut f)
    }
    /// A coarse-grained SVM buffer, `len` elements, zero-initialised.
    #[track_caller]
    pub fn coarse(len: usize) -> Self {
        Self::coarse_from_fn(len, |_| T::from_bits(0))
    }
    /// A coarse-grained SVM buffer, element `i` initialised to `f(i)`.
    #[track_caller]
    pub fn coarse_from_fn(len: usize, mut f: impl FnMut(usize) -> T) -> Self {
        Self::in_region(AllocRegion::SvmCoarse, len, &mut f)
    }
    #[track_caller]
    fn in_region(region: AllocRegion, len: usize, f: &mut dyn FnMut(usize) -> T) -> Self {
        SvmBuffer { cells: Cells::new(region, len, f), region, maps: Maps::default() }
    }
    /// Whether it is fine-grained.
    pub fn is_fine_grained(&self) -> bool {
        self.region != AllocRegion::SvmCoarse
    }
    /// Whether it is fine-grained with SVM atomics support
    /// (`CL_MEM_SVM_ATOMICS`).
    pub fn has_svm_atomics(&self) -> bool {
        self.region == AllocRegion::GlobalFga
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
    /// Read every element in order (one non-atomic load each, attributed
    /// to the caller).
    #[track_caller]
    pub fn to_vec(&self) -> Vec<T> {
        let site = Location::caller();
        (0..self.len()).map(|i| self.cells.read_at(i, "SvmBuffer", site)).collect()
    }
}

impl<T: Value> std::fmt::Debug for SvmBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.region {
            AllocRegion::GlobalFga => "fine-grained with atomics",
            AllocRegion::SvmFine => "fine-grained without atomics",
            _ => "coarse-grained",
        };
        write!(f, "SvmBuffer({kind}, len {})", self.len())
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

impl<T: Value> sealed::Sealed for GlobalBuffer<T> {}
impl<T: Value> MemObject<T> for GlobalBuffer<T> {
    fn mem_len(&self) -> usize {
        self.len()
    }
    fn mem_kind(&self) -> MemKind {
        MemKind::Buffer
    }
    fn mem_read(&self, i: usize, site: &'static Location<'static>) -> T {
        self.cells.read_at(i, "GlobalBuffer", site)
    }
    fn mem_write(&self, i: usize, v: T, site: &'static Location<'static>) {
        self.cells.write_at(i, v, "GlobalBuffer", site)
    }
    fn mem_maps(&self) -> &Maps {
        &self.maps
    }
}

impl<T: Value> sealed::Sealed for SvmBuffer<T> {}
impl<T: Value> MemObject<T> for SvmBuffer<T> {
    fn mem_len(&self) -> usize {
        self.len()
    }
    fn mem_kind(&self) -> MemKind {
        if self.is_fine_grained() {
            MemKind::SvmFine
        } else {
            MemKind::SvmCoarse
        }
    }
    fn mem_read(&self, i: usize, site: &'static Location<'static>) -> T {
        self.cells.read_at(i, "SvmBuffer", site)
    }
    fn mem_write(&self, i: usize, v: T, site: &'static Location<'static>) {
        self.cells.write_at(i, v, "SvmBuffer", site)
    }
    fn mem_maps(&self) -> &Maps {
        &self.maps
    }
}
