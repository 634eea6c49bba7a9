//! The units the scheduler looks at ([`Engine::schedule`](super::Engine)):
//! every unit that may take the next step, so that a step costs
//! O(units / 64 + waiting barrier instances) instead of a question to each
//! unit. Asking every unit made a kernel of n work-items cost O(n) a step,
//! and O(n^2) in all: a tree reduction by 16 work-groups of 256 work-items
//! took 3.2 s for its one execution.
//!
//! A unit leaves the set for good when it finishes or blocks in a spin
//! loop (neither takes another step in the run); for a while when it
//! waits in a join (until some unit finishes), or when it
//! waits at a barrier instance that not every member has reached
//! (`opencl_base.cat`'s `bar_sw` needs every member's entry): it is parked
//! on that instance, and all its parked members come back together once
//! every member is there, or past it. Whether a member is there never
//! becomes false again within a run (the graph only grows), so each
//! instance keeps the number of its members known to be there and asks
//! each member once while the others arrive.

use crate::graph::InstanceKey;
use crate::ids::UnitId;

/// The units that may take the next step, and the parked ones.
#[derive(Default)]
pub(super) struct Ready {
    /// Bit `u`: unit `u` may be enabled.
    bits: Vec<u64>,
    /// The barrier instances with parked members.
    parked: Vec<Parked>,
    /// Units parked in a join (a host waiting for its kernel's
    /// work-items), until some unit finishes.
    joiners: Vec<u32>,
    /// A unit finished since the last [`Ready::wake`].
    finished: bool,
    /// The last barrier instances found ready (every member there or
    /// past it, which stays so in the run): their waiting members go on
    /// without asking the others again. Asking each made the n exits of
    /// an instance cost O(n^2).
    open: Vec<InstanceKey>,
}

/// The most instances [`Ready::open`] keeps (one per work-group or
/// sub-group that is passing a barrier; one forgotten is asked again).
const OPEN: usize = 64;

/// A barrier instance whose waiting members left [`Ready::bits`].
struct Parked {
    key: InstanceKey,
    /// A unit waiting at the instance: whose members are counted.
    at: u32,
    /// Its first `arrived` members are at the instance or past it.
    arrived: usize,
    /// How many events of the next member (`arrived`) were looked at for
    /// the instance's exit: a run only appends events, so the next
    /// question looks at the new ones only (asking for the exit in all of
    /// them at every step of the member on its way there was 7% of a
    /// matrix product's instructions).
    seen: u32,
    /// The members taken out of the set.
    units: Vec<u32>,
}

impl Ready {
    /// A new run: no unit yet.
    pub fn clear(&mut self) {
        self.bits.clear();
        self.parked.clear();
        self.joiners.clear();
        self.finished = false;
        self.open.clear();
    }

    /// Unit `u` may take a step.
    pub fn insert(&mut self, u: usize) {
        let w = u / 64;
        if self.bits.len() <= w {
            self.bits.resize(w + 1, 0);
        }
        self.bits[w] |= 1 << (u % 64);
    }

    /// Instance `key` is ready.
    fn opened(&mut self, key: InstanceKey) {
        if self.open.len() == OPEN {
            self.open.remove(0);
        }
        self.open.push(key);
    }

    /// Unit `u` finished: it takes no step in the rest of the run, and
    /// the joins waiting for it are asked again.
    pub fn finish(&mut self, u: usize) {
        self.leave(u);
        self.finished = true;
    }

    /// Unit `u` waits in a join for units that have not finished: it
    /// leaves the set until one does.
    pub fn park_join(&mut self, u: usize) {
        self.leave(u);
        self.joiners.push(u as u32);
    }

    /// Unit `u` takes no step in the rest of the run (blocked in a spin
    /// loop, or finished), or none for now (parked).
    pub fn leave(&mut self, u: usize) {
        if let Some(w) = self.bits.get_mut(u / 64) {
            *w &= !(1 << (u % 64));
        }
    }

    /// The lowest unit of the set at or after `u`.
    pub fn next_from(&self, u: usize) -> Option<usize> {
        let mut w = u / 64;
        let mut word = *self.bits.get(w)? & (!0u64 << (u % 64));
        loop {
            if word != 0 {
                return Some(w * 64 + word.trailing_zeros() as usize);
            }
            w += 1;
            word = *self.bits.get(w)?;
        }
    }

    /// Whether barrier instance `key`, which unit `u` waits at, is ready:
    /// every one of its `members` is there or past it (`there`). If not,
    /// `u` is parked on it, and leaves the set until it is. An instance
    /// with parked members is not ready within this step ([`Ready::wake`]
    /// has just asked).
    pub fn wait(&mut self, key: InstanceKey, u: usize, members: &[UnitId], there: impl Fn(UnitId) -> bool) -> bool {
        if let Some(p) = self.parked.iter_mut().find(|p| p.key == key) {
            p.units.push(u as u32);
            self.leave(u);
            return false;
        }
        if self.open.iter().rev().any(|k| *k == key) {
            return true;
        }
        let arrived = members.iter().take_while(|&&v| there(v)).count();
        if arrived == members.len() {
            self.opened(key);
            return true;
        }
        self.leave(u);
        self.parked.push(Parked { key, at: u as u32, arrived, seen: 0, units: vec![u as u32] });
        false
    }

    /// Bring back the parked members of every instance that all members
    /// have now reached (the start of a step): `members(at, key)` lists
    /// the members of instance `key`, which unit `at` waits at, and
    /// `there(key, v, seen)` whether member `v` is there or past it, its
    /// first `seen` events known not to be the instance's exit (it sets
    /// `seen` to those it looked at). Each member is asked until it is
    /// there.
    pub fn wake<'g>(&mut self, members: impl Fn(usize, &InstanceKey) -> &'g [UnitId], there: impl Fn(&InstanceKey, UnitId, &mut u32) -> bool) {
        if std::mem::take(&mut self.finished) {
            for u in std::mem::take(&mut self.joiners) {
                self.insert(u as usize);
            }
        }
        let mut i = 0;
        while i < self.parked.len() {
            let p = &mut self.parked[i];
            let all = members(p.at as usize, &p.key);
            while p.arrived < all.len() && there(&p.key, all[p.arrived], &mut p.seen) {
                p.arrived += 1;
                p.seen = 0;
            }
            if p.arrived == all.len() {
                let p = self.parked.swap_remove(i);
                p.units.iter().for_each(|&u| self.insert(u as usize));
                self.opened(p.key);
            } else {
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_from_finds_the_lowest_unit_at_or_after() {
        let mut r = Ready::default();
        for u in [3, 64, 130] {
            r.insert(u);
        }
        assert_eq!(r.next_from(0), Some(3));
        assert_eq!(r.next_from(4), Some(64));
        assert_eq!(r.next_from(65), Some(130));
        assert_eq!(r.next_from(131), None);
        r.leave(64);
        assert_eq!(r.next_from(4), Some(130));
        r.clear();
        assert_eq!(r.next_from(0), None);
    }

    /// Members 0..4 of one work-group; `there[v]`: member v is at the
    /// instance or past it.
    fn key(seq: u32) -> InstanceKey {
        let id = clmm_atomic::backend::BarrierId::Named("b");
        (crate::graph::BarrierInst { id, kind: clmm_atomic::backend::BarrierKind::WorkGroup, seq }, Some(UnitId(0)))
    }

    #[test]
    fn waiting_members_are_parked_until_every_member_is_there() {
        let members: Vec<UnitId> = (0..4).map(UnitId).collect();
        let mut r = Ready::default();
        (0..4).for_each(|u| r.insert(u));
        let there = std::cell::RefCell::new([true, false, false, false]);
        let asked = std::cell::Cell::new(0);
        let ask = |v: UnitId| {
            asked.set(asked.get() + 1);
            there.borrow()[v.index()]
        };
        // Member 0 waits: 1 is not there; 0 leaves the set.
        assert!(!r.wait(key(0), 0, &members, ask));
        assert_eq!(r.next_from(0), Some(1));
        // Members 1 and 2 arrive; 3 has not: wake keeps them parked, and
        // asks no member twice once it is there.
        there.borrow_mut()[1] = true;
        there.borrow_mut()[2] = true;
        r.wake(|_, _| &members[..], |_, v, _| ask(v));
        assert!(!r.wait(key(0), 1, &members, ask), "parked: not ready in this step");
        assert!(!r.wait(key(0), 2, &members, ask));
        assert_eq!(r.next_from(0), Some(3));
        let before = asked.get();
        r.wake(|_, _| &members[..], |_, v, _| ask(v));
        assert_eq!(asked.get(), before + 1, "only member 3 asked");
        // Member 3 arrives: every parked member comes back, and the
        // instance stays open for the members still to exit.
        there.borrow_mut()[3] = true;
        r.wake(|_, _| &members[..], |_, v, _| ask(v));
        assert_eq!((0..4).map(|u| r.next_from(u)).collect::<Vec<_>>(), [Some(0), Some(1), Some(2), Some(3)]);
        let before = asked.get();
        assert!(r.wait(key(0), 1, &members, ask));
        assert_eq!(asked.get(), before, "an open instance asks nobody");
        // Another instance is asked afresh.
        there.borrow_mut()[2] = false;
        assert!(!r.wait(key(1), 0, &members, ask));
    }

    /// What a member's events were looked at up to is handed back at the
    /// next question, and starts again at 0 for the next member.
    #[test]
    fn the_events_seen_of_the_next_member_carry_over() {
        let members: Vec<UnitId> = (0..3).map(UnitId).collect();
        let mut r = Ready::default();
        (0..3).for_each(|u| r.insert(u));
        assert!(!r.wait(key(0), 0, &members, |v| v.0 == 0));
        let asked = std::cell::RefCell::new(Vec::new());
        let there = |v: UnitId, seen: &mut u32, now: u32, arrived: bool| {
            asked.borrow_mut().push((v.0, *seen));
            *seen = now;
            arrived
        };
        r.wake(|_, _| &members[..], |_, v, seen| there(v, seen, 5, false));
        r.wake(|_, _| &members[..], |_, v, seen| there(v, seen, 9, v.0 == 1));
        assert_eq!(*asked.borrow(), [(1, 0), (1, 5), (2, 0)]);
    }

    #[test]
    fn a_join_waits_until_some_unit_finishes() {
        let mut r = Ready::default();
        (0..3).for_each(|u| r.insert(u));
        r.park_join(0);
        r.wake(|_, _| &[], |_, _, _| true);
        assert_eq!(r.next_from(0), Some(1), "nothing finished: still parked");
        r.finish(2);
        r.wake(|_, _| &[], |_, _, _| true);
        assert_eq!((r.next_from(0), r.next_from(2)), (Some(0), None));
    }
}
