//! NDRanges, explicit topologies and work-item ids (spec excerpt
//! `004_8d269728d13116e5.txt`, §3.2 "execution model": NDRange, work-groups,
//! sub-groups; OpenCL 2.0 non-uniform work-groups).

use std::fmt;
use std::sync::Arc;

/// An invalid NDRange or topology, with what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NdRangeError(pub String);

impl fmt::Display for NdRangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid NDRange: {}", self.0)
    }
}
impl std::error::Error for NdRangeError {}

/// An N-dimensional index space (1 to 3 dimensions) with its work-group size,
/// global offset and sub-group size, as `clEnqueueNDRangeKernel` takes it.
///
/// The global size need not be a multiple of the local size: as in OpenCL
/// 2.0, the last work-group of a dimension is smaller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NdRange {
    dims: usize,
    global: [usize; 3],
    local: [usize; 3],
    offset: [usize; 3],
    sub_group_size: Option<usize>,
}

impl NdRange {
    /// An NDRange of `global` work-items in work-groups of `local`, 1 to 3
    /// dimensions. Panics with the reason if the sizes are invalid; see
    /// [`NdRange::try_new`].
    #[track_caller]
    pub fn new<const D: usize>(global: [usize; D], local: [usize; D]) -> NdRange {
        match NdRange::try_new(global, local) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        }
    }

    /// Like [`NdRange::new`], returning the reason when the sizes are invalid.
    pub fn try_new<const D: usize>(global: [usize; D], local: [usize; D]) -> Result<NdRange, NdRangeError> {
        if D == 0 || D > 3 {
            return Err(NdRangeError(format!("{D} dimensions; OpenCL allows 1 to 3")));
        }
        let mut g = [1; 3];
        let mut l = [1; 3];
        for d in 0..D {
            if global[d] == 0 {
                return Err(NdRangeError(format!("global size 0 in dimension {d}")));
            }
            if local[d] == 0 {
                return Err(NdRangeError(format!("local size 0 in dimension {d}")));
            }
            g[d] = global[d];
            l[d] = local[d].min(global[d]);
            if local[d] > global[d] {
                return Err(NdRangeError(format!(
                    "local size {} larger than global size {} in dimension {d}",
                    local[d], global[d]
                )));
            }
        }
        Ok(NdRange { dims: D, global: g, local: l, offset: [0; 3], sub_group_size: None })
    }

    /// The global work offset (`global_work_offset`). Panics if it has
    /// another number of dimensions than the range, or if a global id
    /// (offset + global size - 1) would not fit in `usize` (OpenCL's
    /// `CL_INVALID_GLOBAL_OFFSET`: the ids would wrap).
    #[track_caller]
    pub fn with_offset<const D: usize>(mut self, offset: [usize; D]) -> NdRange {
        assert!(D == self.dims, "invalid NDRange: the offset has {D} dimensions, the NDRange {}", self.dims);
        for (d, &o) in offset.iter().enumerate() {
            let last = self.global[d] - 1;
            if o.checked_add(last).is_none() {
                panic!("invalid NDRange: offset {o} in dimension {d} overflows: the last global id would be {o} + {last}, beyond usize::MAX (CL_INVALID_GLOBAL_OFFSET)");
            }
        }
        self.offset[..D].copy_from_slice(&offset);
        self
    }

    /// The sub-group size (work-items of a work-group are split into
    /// sub-groups of this many consecutive linear local ids; the last may be
    /// smaller). Default: the whole work-group is one sub-group.
    #[track_caller]
    pub fn with_sub_group_size(mut self, n: usize) -> NdRange {
        assert!(n > 0, "invalid NDRange: sub-group size 0");
        self.sub_group_size = Some(n);
        self
    }

    /// Number of dimensions.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// The work-items and work-groups of this range, in launch order
    /// (work-groups in linear order, work-items in linear local order).
    pub fn plan(&self) -> LaunchPlan {
        let num_groups: [usize; 3] = std::array::from_fn(|d| self.global[d].div_ceil(self.local[d]));
        let mut plan = LaunchPlan {
            groups: Vec::with_capacity(num_groups.iter().product()),
            items: Vec::with_capacity(self.global.iter().product()),
        };
        // The first work-group is always a whole one (local <= global), so
        // its sub-group size is the largest of the dispatch: the trailing
        // non-uniform groups are smaller and may have smaller sub-groups, but
        // `get_max_sub_group_size` and `get_enqueued_num_sub_groups` are
        // "invariant for a given set of dispatch dimensions".
        let enqueued_n: usize = self.local.iter().product();
        let max_sub_group_size = self.sub_group_size.unwrap_or(enqueued_n).min(enqueued_n);
        let geometry = Arc::new(Geometry {
            dims: self.dims,
            global: self.global,
            enqueued_local: self.local,
            offset: self.offset,
            num_groups,
            max_sub_group_size,
            enqueued_num_sub_groups: enqueued_n.div_ceil(max_sub_group_size),
        });
        for gz in 0..num_groups[2] {
            for gy in 0..num_groups[1] {
                for gx in 0..num_groups[0] {
                    let gid = [gx, gy, gz];
                    let mut size = [1; 3];
                    for d in 0..3 {
                        size[d] = self.local[d].min(self.global[d] - gid[d] * self.local[d]);
                    }
                    let n = size[0] * size[1] * size[2];
                    let sg = self.sub_group_size.unwrap_or(n).min(n);
                    let flat_group = plan.groups.len();
                    plan.groups.push(GroupPlan { device: 0, size: n, first_item: plan.items.len(), sub_group_size: sg });
                    for lz in 0..size[2] {
                        for ly in 0..size[1] {
                            for lx in 0..size[0] {
                                let lid = [lx, ly, lz];
                                let linear = lx + size[0] * (ly + size[1] * lz);
                                let mut global_id = [0; 3];
                                for d in 0..3 {
                                    global_id[d] = gid[d] * self.local[d] + lid[d] + self.offset[d];
                                }
                                plan.items.push(WorkItem {
                                    geometry: geometry.clone(),
                                    global_id,
                                    local_id: lid,
                                    group_id: gid,
                                    local_size: size,
                                    flat_group,
                                    linear_local_id: linear,
                                    sub_group_size: sg,
                                    device: 0,
                                    native: None,
                                });
                            }
                        }
                    }
                }
            }
        }
        plan
    }
}

/// An explicit topology below [`NdRange`]: devices, each with work-groups of
/// any sizes (in any order), each split into sub-groups. The litmus front end
/// launches scope trees like `(device (work_group P0) (work_group P1 P2))`
/// this way.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Topology {
    devices: Vec<Vec<(usize, usize)>>,
}

impl Topology {
    /// An empty topology; add devices with [`Topology::device`].
    pub fn new() -> Topology {
        Topology::default()
    }

    /// Add a device whose work-groups have the given sizes (one sub-group
    /// per work-group).
    pub fn device(mut self, group_sizes: impl IntoIterator<Item = usize>) -> Topology {
        self.devices.push(group_sizes.into_iter().map(|n| (n, n)).collect());
        self
    }

    /// Add a device whose work-groups are given as `(size, sub_group_size)`.
    pub fn device_with_sub_groups(mut self, groups: impl IntoIterator<Item = (usize, usize)>) -> Topology {
        self.devices.push(groups.into_iter().collect());
        self
    }

    /// The work-items of this topology in launch order: devices in order,
    /// their work-groups in order, work-items by local id. On each device,
    /// `global_id(0)` counts the device's work-items and `group_id(0)` its
    /// work-groups.
    pub fn plan(&self) -> Result<LaunchPlan, NdRangeError> {
        if self.devices.is_empty() {
            return Err(NdRangeError("topology without devices".into()));
        }
        let mut plan = LaunchPlan::default();
        // The largest sub-group of the whole launch, the same for every
        // work-item (`get_max_sub_group_size`); sizes 0 are rejected below.
        let max_sub_group_size = self.devices.iter().flatten().map(|&(size, sg)| sg.min(size)).max().unwrap_or(1).max(1);
        for (dev, groups) in self.devices.iter().enumerate() {
            if groups.is_empty() {
                return Err(NdRangeError(format!("device {dev} has no work-groups")));
            }
            let total: usize = groups.iter().map(|g| g.0).sum();
            let max = groups.iter().map(|g| g.0).max().unwrap_or(1);
            // The device's largest work-group stands for the "uniform
            // region" (its enqueued local size): its sub-group count is
            // `get_enqueued_num_sub_groups` on this device.
            let largest = groups.iter().find(|g| g.0 == max).map_or(1, |&(size, sg)| size.div_ceil(sg.clamp(1, size.max(1))));
            let geometry = Arc::new(Geometry {
                dims: 1,
                global: [total, 1, 1],
                enqueued_local: [max, 1, 1],
                offset: [0; 3],
                num_groups: [groups.len(), 1, 1],
                max_sub_group_size,
                enqueued_num_sub_groups: largest,
            });
            let mut next_global = 0;
            for (g, &(size, sg)) in groups.iter().enumerate() {
                if size == 0 {
                    return Err(NdRangeError(format!("work-group {g} of device {dev} is empty")));
                }
                if sg == 0 {
                    return Err(NdRangeError(format!("sub-group size 0 in work-group {g} of device {dev}")));
                }
                let flat_group = plan.groups.len();
                plan.groups.push(GroupPlan { device: dev, size, first_item: plan.items.len(), sub_group_size: sg.min(size) });
                for l in 0..size {
                    plan.items.push(WorkItem {
                        geometry: geometry.clone(),
                        global_id: [next_global, 0, 0],
                        local_id: [l, 0, 0],
                        group_id: [g, 0, 0],
                        local_size: [size, 1, 1],
                        flat_group,
                        linear_local_id: l,
                        sub_group_size: sg.min(size),
                        device: dev,
                        native: None,
                    });
                    next_global += 1;
                }
            }
        }
        Ok(plan)
    }
}

/// The sizes shared by all work-items of one launch on one device.
#[derive(Debug, PartialEq, Eq)]
struct Geometry {
    dims: usize,
    global: [usize; 3],
    enqueued_local: [usize; 3],
    offset: [usize; 3],
    num_groups: [usize; 3],
    /// The largest sub-group size of the dispatch (`get_max_sub_group_size`),
    /// the same in every work-group, non-uniform ones included.
    max_sub_group_size: usize,
    /// The sub-groups of a work-group of the enqueued local size
    /// (`get_enqueued_num_sub_groups`).
    enqueued_num_sub_groups: usize,
}

/// One work-group of a [`LaunchPlan`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupPlan {
    /// The device it runs on.
    pub device: usize,
    /// Number of work-items.
    pub size: usize,
    /// Index of its first work-item in [`LaunchPlan::items`].
    pub first_item: usize,
    /// Its sub-group size.
    pub sub_group_size: usize,
}

/// Every work-item and work-group of one launch, resolved.
#[derive(Clone, Debug, Default)]
pub struct LaunchPlan {
    /// The work-items, grouped by work-group, in launch order.
    pub items: Vec<WorkItem>,
    /// The work-groups in launch order.
    pub groups: Vec<GroupPlan>,
}

/// Per-group synchronisation objects of the native backend.
#[derive(Debug)]
pub(crate) struct NativeGroup {
    pub(crate) barrier: std::sync::Barrier,
    pub(crate) sub_barriers: Vec<std::sync::Barrier>,
    /// One slot per work-item (by linear local id) through which the
    /// collectives exchange their values.
    pub(crate) slots: Vec<std::sync::atomic::AtomicU64>,
    /// The kernel instance the group belongs to (device-side enqueue).
    pub(crate) kernel: Arc<crate::launch::NativeKernel>,
    /// Set once every work-item of the group has finished (the end of the
    /// work-group, `CLK_ENQUEUE_FLAGS_WAIT_WORK_GROUP`).
    pub(crate) ended: Arc<crate::launch::NativeEvent>,
    /// Work-items of the group still running.
    pub(crate) running: std::sync::atomic::AtomicUsize,
}

/// The ids and sizes of one work-item, passed to the kernel
/// (`get_global_id` and friends).
#[derive(Clone)]
pub struct WorkItem {
    geometry: Arc<Geometry>,
    global_id: [usize; 3],
    local_id: [usize; 3],
    group_id: [usize; 3],
    local_size: [usize; 3],
    flat_group: usize,
    linear_local_id: usize,
    sub_group_size: usize,
    device: usize,
    pub(crate) native: Option<Arc<NativeGroup>>,
}

impl fmt::Debug for WorkItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "WorkItem(global {:?}, group {:?}, local {:?})", self.global_id, self.group_id, self.local_id)
    }
}

impl WorkItem {
    /// `get_work_dim()`
    pub fn work_dim(&self) -> usize {
        self.geometry.dims
    }
    /// `get_global_id(d)` (0 for dimensions beyond `work_dim`)
    pub fn global_id(&self, d: usize) -> usize {
        self.global_id.get(d).copied().unwrap_or(0)
    }
    /// `get_local_id(d)`
    pub fn local_id(&self, d: usize) -> usize {
        self.local_id.get(d).copied().unwrap_or(0)
    }
    /// `get_group_id(d)`
    pub fn group_id(&self, d: usize) -> usize {
        self.group_id.get(d).copied().unwrap_or(0)
    }
    /// `get_global_size(d)`
    pub fn global_size(&self, d: usize) -> usize {
        self.geometry.global.get(d).copied().unwrap_or(1)
    }
    /// `get_local_size(d)`: the size of this work-group (smaller for the
    /// last, non-uniform group).
    pub fn local_size(&self, d: usize) -> usize {
        self.local_size.get(d).copied().unwrap_or(1)
    }
    /// `get_enqueued_local_size(d)`
    pub fn enqueued_local_size(&self, d: usize) -> usize {
        self.geometry.enqueued_local.get(d).copied().unwrap_or(1)
    }
    /// `get_num_groups(d)`
    pub fn num_groups(&self, d: usize) -> usize {
        self.geometry.num_groups.get(d).copied().unwrap_or(1)
    }
    /// `get_global_offset(d)`
    pub fn global_offset(&self, d: usize) -> usize {
        self.geometry.offset.get(d).copied().unwrap_or(0)
    }
    /// `get_local_linear_id()`
    pub fn local_linear_id(&self) -> usize {
        self.linear_local_id
    }
    /// `get_global_linear_id()`
    pub fn global_linear_id(&self) -> usize {
        let g = &self.geometry;
        let id = |d: usize| self.global_id[d] - g.offset[d];
        id(0) + g.global[0] * (id(1) + g.global[1] * id(2))
    }
    /// `get_sub_group_id()`
    pub fn sub_group_id(&self) -> usize {
        self.linear_local_id / self.sub_group_size
    }
    /// `get_sub_group_local_id()`
    pub fn sub_group_local_id(&self) -> usize {
        self.linear_local_id % self.sub_group_size
    }
    /// `get_max_sub_group_size()`: the largest sub-group size within the
    /// dispatch, the same for every work-item (OpenCL C: "invariant for a
    /// given set of dispatch dimensions"), also in a trailing non-uniform
    /// work-group whose own sub-groups are smaller.
    pub fn max_sub_group_size(&self) -> usize {
        self.geometry.max_sub_group_size
    }
    /// `get_sub_group_size()`: the size of this work-item's sub-group.
    pub fn sub_group_size(&self) -> usize {
        let n = self.local_size[0] * self.local_size[1] * self.local_size[2];
        let first = self.sub_group_id() * self.sub_group_size;
        self.sub_group_size.min(n - first)
    }
    /// `get_num_sub_groups()`: the sub-groups of this work-group (fewer in a
    /// trailing non-uniform one).
    pub fn num_sub_groups(&self) -> usize {
        let n = self.local_size[0] * self.local_size[1] * self.local_size[2];
        n.div_ceil(self.sub_group_size)
    }
    /// `get_enqueued_num_sub_groups()`: the sub-groups of a work-group of the
    /// enqueued local size, the same for every work-item of the dispatch
    /// (equal to [`WorkItem::num_sub_groups`] but in a trailing non-uniform
    /// work-group).
    pub fn enqueued_num_sub_groups(&self) -> usize {
        self.geometry.enqueued_num_sub_groups
    }
    /// The device this work-item runs on (0 for an [`NdRange`] launch).
    pub fn device(&self) -> usize {
        self.device
    }
    pub(crate) fn set_device(&mut self, d: usize) {
        self.device = d;
    }
    /// The index of this work-item's group among all groups of the launch.
    pub fn flat_group(&self) -> usize {
        self.flat_group
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn non_uniform_last_group() {
        let p = NdRange::new([5], [2]).plan();
        assert_eq!(p.groups.len(), 3);
        assert_eq!(p.groups[2].size, 1);
        assert_eq!(p.items[4].local_size(0), 1);
        assert_eq!(p.items[4].enqueued_local_size(0), 2);
        assert_eq!(p.items[4].group_id(0), 2);
    }
    #[test]
    fn two_dims_with_offset_and_sub_groups() {
        let p = NdRange::new([4, 2], [2, 2]).with_offset([10, 0]).with_sub_group_size(2).plan();
        assert_eq!(p.items.len(), 8);
        let it = &p.items[3];
        assert_eq!((it.global_id(0), it.global_id(1)), (11, 1));
        assert_eq!((it.sub_group_id(), it.sub_group_local_id()), (1, 1));
        assert_eq!(it.global_linear_id(), 5);
    }
    /// The user-acceptance case: in `[3,2]` by `[2,2]` with sub-groups of 3,
    /// group 1 has 2 work-items and one sub-group of 2, yet its work-items
    /// report the dispatch's largest sub-group size (3) and the enqueued
    /// group's sub-group count (2), like group 0's; only
    /// `get_sub_group_size` and `get_num_sub_groups` are per group.
    #[test]
    fn max_sub_group_size_is_the_same_in_a_non_uniform_group() {
        let p = NdRange::new([3, 2], [2, 2]).with_sub_group_size(3).plan();
        assert_eq!(p.groups.iter().map(|g| (g.size, g.sub_group_size)).collect::<Vec<_>>(), [(4, 3), (2, 2)]);
        for it in &p.items {
            assert_eq!((it.max_sub_group_size(), it.enqueued_num_sub_groups()), (3, 2), "{it:?}");
        }
        let sizes = |g: usize| p.items.iter().filter(|it| it.group_id(0) == g).map(|it| (it.sub_group_id(), it.sub_group_size(), it.num_sub_groups())).collect::<Vec<_>>();
        assert_eq!(sizes(0), [(0, 3, 2), (0, 3, 2), (0, 3, 2), (1, 1, 2)]);
        assert_eq!(sizes(1), [(0, 2, 1), (0, 2, 1)]);
        // A topology is one dispatch too: the largest sub-group of all devices.
        let t = Topology::new().device_with_sub_groups([(4, 2), (1, 1)]).device_with_sub_groups([(3, 3)]).plan().unwrap();
        assert!(t.items.iter().all(|it| it.max_sub_group_size() == 3));
        assert_eq!(t.items.iter().map(|it| it.enqueued_num_sub_groups()).collect::<Vec<_>>(), [2, 2, 2, 2, 2, 1, 1, 1]);
    }
    #[test]
    fn invalid_ranges_say_why() {
        assert!(NdRange::try_new([0], [1]).unwrap_err().to_string().contains("global size 0"));
        assert!(NdRange::try_new([2], [4]).unwrap_err().to_string().contains("larger"));
        assert!(Topology::new().plan().is_err());
    }
}
