//! Launching kernels: `launch` (enqueue + finish of one NDRange) and
//! `launch_with_local` (local memory created once per work-group).

use crate::backend;
use crate::ndrange::{LaunchPlan, NativeGroup, NdRange, Topology, WorkItem};
use std::cell::RefCell;
use std::panic::Location;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

/// What a kernel can be launched over: an [`NdRange`] or an explicit
/// [`Topology`].
pub trait Range {
    /// The resolved work-items and work-groups; panics with the reason when
    /// the range is invalid (at the user's launch or enqueue).
    #[track_caller]
    fn to_plan(&self) -> LaunchPlan;

    /// [`Range::to_plan`], shared: a checked test launches the same range
    /// once per execution, and an [`NdRange`] reuses its plan then.
    #[doc(hidden)]
    #[track_caller]
    fn shared_plan(&self) -> Rc<LaunchPlan> {
        Rc::new(self.to_plan())
    }
}

impl Range for NdRange {
    fn to_plan(&self) -> LaunchPlan {
        self.plan()
    }

    /// Inside `clmm::model`, the plan of the last NDRange launched on this
    /// thread is kept (the checker reruns the test once per execution; a
    /// plan is three allocations, and a work-item per unit). Outside, the
    /// plan is made anew: a native launch may be large.
    fn shared_plan(&self) -> Rc<LaunchPlan> {
        thread_local! {
            static LAST: RefCell<Option<(NdRange, Rc<LaunchPlan>)>> = const { RefCell::new(None) };
        }
        if backend::current().is_none() {
            return Rc::new(self.plan());
        }
        LAST.with(|last| {
            let mut last = last.borrow_mut();
            match &*last {
                Some((r, p)) if r == self => p.clone(),
                _ => {
                    let p = Rc::new(self.plan());
                    *last = Some((self.clone(), p.clone()));
                    p
                }
            }
        })
    }
}
impl Range for Topology {
    #[track_caller]
    fn to_plan(&self) -> LaunchPlan {
        match self.plan() {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        }
    }
}
impl<R: Range> Range for &R {
    fn to_plan(&self) -> LaunchPlan {
        (**self).to_plan()
    }

    fn shared_plan(&self) -> Rc<LaunchPlan> {
        (**self).shared_plan()
    }
}

/// One work-group, as the local initialiser of [`launch_with_local`] sees it.
#[derive(Clone, Debug)]
pub struct WorkGroup {
    /// `get_group_id(d)` of its work-items.
    pub group_id: [usize; 3],
    /// Number of work-items.
    pub size: usize,
    /// Its device.
    pub device: usize,
    /// Its index among all work-groups of the launch.
    pub flat: usize,
}

/// Run `kernel` on every work-item of `range` and return, in launch order
/// (work-groups in order, work-items by local id), the value each returned.
///
/// Inside `clmm::model`, every work-item is a unit of execution of the
/// checker; the launch synchronises the caller's earlier accesses with the
/// kernel's start and the kernel's end with what follows. Outside, work-items
/// run on real threads.
#[track_caller]
pub fn launch<R, F>(range: impl Range, kernel: F) -> Vec<R>
where
    R: Send,
    F: Fn(&WorkItem) -> R + Sync,
{
    launch_with_local(range, |_| (), |item, _: &()| kernel(item))
}

/// Like [`launch`], with local memory: `init` runs once per work-group
/// (allocations inside it — `LocalBuffer::new`, atomics' `new` — land in that
/// group's local memory) and its value is passed to each of the group's
/// work-items.
#[track_caller]
pub fn launch_with_local<L, R, I, F>(range: impl Range, init: I, kernel: F) -> Vec<R>
where
    L: Send + Sync,
    R: Send,
    I: Fn(&WorkGroup) -> L,
    F: Fn(&WorkItem, &L) -> R + Sync,
{
    launch_plan(&range.shared_plan(), init, kernel, Location::caller())
}

/// [`launch_with_local`] on a resolved plan (also the body of an enqueued
/// kernel command).
#[track_caller]
pub(crate) fn launch_plan<L, R, I, F>(plan: &LaunchPlan, init: I, kernel: F, site: &'static Location<'static>) -> Vec<R>
where
    L: Send + Sync,
    R: Send,
    I: Fn(&WorkGroup) -> L,
    F: Fn(&WorkItem, &L) -> R + Sync,
{
    let group_of = |g: usize| {
        let gp = &plan.groups[g];
        let first = &plan.items[gp.first_item];
        WorkGroup {
            group_id: [first.group_id(0), first.group_id(1), first.group_id(2)],
            size: gp.size,
            device: gp.device,
            flat: g,
        }
    };
    match backend::current() {
        Some(b) => {
            // OpenCL C has no launch that waits from inside a kernel: a
            // work-item enqueues a kernel on a device-side queue, and the
            // parent kernel does not wait for it (`DeviceQueue`). A nested
            // `launch` was run as if the work-item were a host.
            if crate::buffer::current_unit() & backend::WORK_ITEM != 0 {
                panic!("clmm: launch called from inside a kernel: a work-item cannot launch a kernel and wait for it (OpenCL C has no such call); enqueue it on a DeviceQueue (device-side enqueue, which the parent kernel does not wait for), or launch it from the host");
            }
            let locals: Vec<std::sync::OnceLock<L>> = (0..plan.groups.len()).map(|_| std::sync::OnceLock::new()).collect();
            let results: Vec<Mutex<Option<R>>> = (0..plan.items.len()).map(|_| Mutex::new(None)).collect();
            let index_of = |item: &WorkItem| plan.groups[item.flat_group()].first_item + item.local_linear_id();
            let mut init_one = |g: usize| {
                let _ = locals[g].set(init(&group_of(g)));
            };
            b.launch(
                plan,
                &mut init_one,
                &|item: &WorkItem| {
                    let l = locals[item.flat_group()].get().expect("clmm: the local initialiser of this work-group did not run");
                    let r = kernel(item, l);
                    *results[index_of(item)].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                },
                site,
            );
            results
                .into_iter()
                .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()).expect("clmm: a work-item did not finish"))
                .collect()
        }
        None => run_native(plan, &group_of, &init, &kernel),
    }
}

/// A one-shot event of the native backend: set once, waited on by any
/// number of threads (a command's completion, a kernel's or work-group's
/// end).
#[derive(Default, Debug)]
pub(crate) struct NativeEvent {
    done: Mutex<bool>,
    cv: std::sync::Condvar,
}

impl NativeEvent {
    /// Block until the event is set.
    pub(crate) fn wait(&self) {
        let mut d = self.done.lock().unwrap_or_else(|e| e.into_inner());
        while !*d {
            d = self.cv.wait(d).unwrap_or_else(|e| e.into_inner());
        }
    }
    /// Set it; false if it already was.
    pub(crate) fn set(&self) -> bool {
        let mut d = self.done.lock().unwrap_or_else(|e| e.into_inner());
        let was = std::mem::replace(&mut *d, true);
        self.cv.notify_all();
        !was
    }
}

/// Sets an event when dropped, so that waiters are released even when the
/// code it guards panics.
pub(crate) struct SetOnDrop(pub(crate) Arc<NativeEvent>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.set();
    }
}

/// One kernel instance of the native backend, as its work-items see it for
/// device-side enqueue: its end, and the completion events of the child
/// kernels its work-items enqueued (the kernel completes only after them).
#[derive(Default, Debug)]
pub(crate) struct NativeKernel {
    /// Set once every work-item has finished (`CLK_ENQUEUE_FLAGS_WAIT_KERNEL`).
    pub(crate) ended: Arc<NativeEvent>,
    /// The completion events of the children enqueued so far.
    pub(crate) children: Mutex<Vec<Arc<NativeEvent>>>,
}

pub(crate) fn run_native<L, R, I, F>(plan: &LaunchPlan, group_of: &dyn Fn(usize) -> WorkGroup, init: &I, kernel: &F) -> Vec<R>
where
    L: Send + Sync,
    R: Send,
    I: Fn(&WorkGroup) -> L,
    F: Fn(&WorkItem, &L) -> R + Sync,
{
    let locals: Vec<L> = (0..plan.groups.len()).map(|g| init(&group_of(g))).collect();
    let instance = Arc::new(NativeKernel::default());
    let syncs: Vec<Arc<NativeGroup>> = plan
        .groups
        .iter()
        .map(|g| {
            let nsub = g.size.div_ceil(g.sub_group_size);
            let sub_barriers = (0..nsub)
                .map(|s| std::sync::Barrier::new(g.sub_group_size.min(g.size - s * g.sub_group_size)))
                .collect();
            let slots = (0..g.size).map(|_| std::sync::atomic::AtomicU64::new(0)).collect();
            Arc::new(NativeGroup {
                barrier: std::sync::Barrier::new(g.size),
                sub_barriers,
                slots,
                kernel: instance.clone(),
                ended: Arc::new(NativeEvent::default()),
                running: std::sync::atomic::AtomicUsize::new(g.size),
            })
        })
        .collect();
    let results = {
        // The kernel's end, also when a work-item panics (children waiting
        // for it must not hang).
        let _ended = SetOnDrop(instance.ended.clone());
        std::thread::scope(|s| {
            let handles: Vec<_> = plan
                .items
                .iter()
                .map(|item| {
                    let mut item = item.clone();
                    let group = syncs[item.flat_group()].clone();
                    item.native = Some(group.clone());
                    let local = &locals[item.flat_group()];
                    std::thread::Builder::new()
                        .stack_size(512 * 1024)
                        .spawn_scoped(s, move || {
                            struct GroupEnd(Arc<NativeGroup>);
                            impl Drop for GroupEnd {
                                fn drop(&mut self) {
                                    if self.0.running.fetch_sub(1, std::sync::atomic::Ordering::AcqRel) == 1 {
                                        self.0.ended.set();
                                    }
                                }
                            }
                            let _end = GroupEnd(group);
                            kernel(&item, local)
                        })
                        .expect("clmm: cannot spawn a work-item thread")
                })
                .collect();
            handles.into_iter().map(|h| h.join()).collect::<Vec<_>>()
        })
    };
    // The kernel completes once its children have (no work-item can
    // enqueue another one now).
    let children: Vec<Arc<NativeEvent>> = instance.children.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for c in children {
        c.wait();
    }
    results.into_iter().map(|r| r.unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
}
