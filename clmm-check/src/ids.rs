//! Newtype ids of the checker.

use std::fmt;

/// A unit of execution: a host thread or a work-item. The model closure is
/// unit 0; work-items are numbered in launch order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UnitId(pub u32);

impl UnitId {
    /// The pseudo-unit of initial writes.
    pub const INIT: UnitId = UnitId(u32::MAX);
    /// The index as `usize`.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A work-group, numbered across all launches of an execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupId(pub u32);

/// A sub-group, numbered across all launches of an execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SubGroupId(pub u32);

/// A device of the context.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeviceId(pub u32);

/// An event: the `index`-th event of `unit` in program order (sequenced
/// before). Initial writes are `EventId { unit: INIT, index: location }`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventId {
    /// Its unit.
    pub unit: UnitId,
    /// Its position in the unit's program order.
    pub index: u32,
}

impl EventId {
    /// The initial write of location `loc`.
    pub fn init(loc: clmm_atomic::backend::LocId) -> EventId {
        EventId { unit: UnitId::INIT, index: loc.0 }
    }
    /// Whether this is an initial write.
    pub fn is_init(self) -> bool {
        self.unit == UnitId::INIT
    }
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_init() {
            write!(f, "init(loc {})", self.index)
        } else {
            write!(f, "u{}.{}", self.unit.0, self.index)
        }
    }
}
