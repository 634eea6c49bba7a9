//! The clocks themselves: a [`Slice`] of the arena (the host's units and
//! a work-group's window), an event's [`View`] of one region, and the
//! [`Join`] a new view is computed in. The rest of [`Clocks`] (super)
//! computes views from these and checks the axioms against them.

use super::*;

/// Where a clock is in [`Clocks::arena`]: the entries of units `[0, lo)`
/// at `off`, then those of units `[base, base + len)`; every other entry
/// is 0. The work-items of a work-group have consecutive units far from
/// the host's (unit 0 and the host threads): a work-item's clock in a
/// wide NDRange holds the entries of the host and of its own work-group,
/// and its local clock only those of its work-group. Dense clocks from
/// unit 0 made each of them as long as the work-item's unit index: a
/// barrier of the last of 16 work-groups of 256 work-items joined 256
/// clocks of about 4,096 entries ([`Join`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Slice {
    pub(super) off: u32,
    pub(super) lo: u32,
    pub(super) base: u32,
    pub(super) len: u32,
}

impl Slice {
    pub(super) fn is_empty(&self) -> bool {
        self.lo == 0 && self.len == 0
    }

    /// Where it ends in the arena.
    pub(super) fn end(&self) -> u32 {
        self.off + self.lo + self.len
    }

    /// Its two segments in `arena`: the entries of units `[0, lo)`, the
    /// first unit of the second, and its entries.
    pub(super) fn segments<'a>(&self, arena: &'a [u32]) -> (&'a [u32], usize, &'a [u32]) {
        let (off, lo) = (self.off as usize, self.lo as usize);
        (&arena[off..off + lo], self.base as usize, &arena[off + lo..self.end() as usize])
    }

    /// The entry of unit `u`.
    pub(super) fn entry(&self, arena: &[u32], u: usize) -> u32 {
        if u < self.lo as usize {
            arena[self.off as usize + u]
        } else if u >= self.base as usize && u < (self.base + self.len) as usize {
            arena[(self.off + self.lo) as usize + u - self.base as usize]
        } else {
            0
        }
    }
}

/// One region's view of an event.
///
/// The clock is the [`Slice`] `clock` of the arena, with the entry of unit
/// `owner` at least `own`: an event that nothing new synchronises with
/// has its program-order predecessor's slice of the arena, and only its
/// own position in `own` ([`Clocks::add`]). Copying the clock at every
/// event cost O(units) an event in time and memory: a work-group of 256
/// work-items wrote 2 KiB of clocks per event.
#[derive(Clone, Debug, Default)]
pub(super) struct View {
    /// The clock, indexed by unit.
    pub(super) clock: Slice,
    /// The unit whose entry `own` raises (the event's).
    pub(super) owner: u32,
    pub(super) own: u32,
    /// The initial writes of the region happen before the event.
    pub(super) init: bool,
    /// Events outside the region that happen before the event in it.
    pub(super) lifted: Vec<EventId>,
}

impl View {
    /// Whether anything of the other region or any clock entry is in it.
    pub(super) fn holds_any(&self) -> bool {
        !self.clock.is_empty() || !self.lifted.is_empty()
    }
}

/// A view being computed ([`Clocks::add`], [`Clocks::barrier_join`]): the
/// join of the clocks, initial writes and lifted events of its sources.
#[derive(Default)]
pub(super) struct Join {
    /// The entries of units `[0, lo.len())`.
    pub(super) lo: Vec<u32>,
    /// The entries of units `[base, base + hi.len())` (`base` above
    /// `lo.len()`); all others are 0 ([`Slice`]).
    pub(super) base: u32,
    pub(super) hi: Vec<u32>,
    pub(super) init: bool,
    pub(super) lifted: Vec<EventId>,
}

impl Join {
    /// Empty, with the buffers of `bufs`.
    pub(super) fn with(bufs: [Vec<u32>; 2]) -> Join {
        let [mut lo, mut hi] = bufs;
        lo.clear();
        hi.clear();
        Join { lo, base: 0, hi, init: false, lifted: Vec::new() }
    }

    /// With view `v` of `clocks`.
    pub(super) fn view(&mut self, clocks: &Clocks, v: &View) {
        self.clock(clocks, v.clock);
        self.own_and_lifted(v);
    }

    /// With clock `c` of `clocks`.
    pub(super) fn clock(&mut self, clocks: &Clocks, c: Slice) {
        let (lo, base, hi) = c.segments(&clocks.arena);
        self.entries(0, lo);
        // Most views have no second segment: no call for it.
        if !hi.is_empty() {
            self.entries(base, hi);
        }
    }

    /// With view `v` but its clock.
    pub(super) fn own_and_lifted(&mut self, v: &View) {
        if v.own > 0 {
            self.raise(v.owner as usize, v.own);
        }
        self.init |= v.init;
        v.lifted.iter().for_each(|&x| self.lift(x));
    }

    /// With another join.
    pub(super) fn join(&mut self, o: &Join) {
        self.entries(0, &o.lo);
        self.entries(o.base as usize, &o.hi);
        self.init |= o.init;
        o.lifted.iter().for_each(|&x| self.lift(x));
    }

    /// With event `e` of the region itself.
    pub(super) fn event(&mut self, e: EventId) {
        self.raise(e.unit.index(), e.index + 1);
    }

    /// With entry `k` of unit `u`.
    pub(super) fn raise(&mut self, u: usize, k: u32) {
        if let Some(a) = self.lo.get_mut(u) {
            *a = (*a).max(k);
        } else if let Some(a) = u.checked_sub(self.base as usize).and_then(|i| self.hi.get_mut(i)) {
            *a = (*a).max(k);
        } else {
            self.entries(u, &[k]);
        }
    }

    /// With entries `vals` of units `[start, start + vals.len())`: into
    /// `lo` if they touch it, else into `hi`, which grows to their hull
    /// (and joins `lo` once they touch).
    pub(super) fn entries(&mut self, start: usize, vals: &[u32]) {
        if vals.is_empty() {
            return;
        }
        if start <= self.lo.len() {
            join_at(&mut self.lo, start, vals);
            if !self.hi.is_empty() && self.base as usize <= self.lo.len() {
                let hi = std::mem::take(&mut self.hi);
                join_at(&mut self.lo, self.base as usize, &hi);
                self.hi = hi;
                self.hi.clear();
            }
            return;
        }
        if self.hi.is_empty() {
            self.base = start as u32;
            self.hi.extend_from_slice(vals);
            return;
        }
        let base = self.base as usize;
        if start < base {
            self.hi.splice(0..0, std::iter::repeat_n(0, base - start));
            self.base = start as u32;
        }
        join_at(&mut self.hi, start - self.base as usize, vals);
    }

    /// Its entries into `arena`: where they are.
    pub(super) fn store(&self, arena: &mut Vec<u32>) -> Slice {
        let off = arena.len() as u32;
        arena.extend_from_slice(&self.lo);
        arena.extend_from_slice(&self.hi);
        Slice { off, lo: self.lo.len() as u32, base: self.base, len: self.hi.len() as u32 }
    }

    /// Its buffers back.
    pub(super) fn into_bufs(self) -> [Vec<u32>; 2] {
        [self.lo, self.hi]
    }

    /// With event `x` of the other region (lifted by `scf`).
    pub(super) fn lift(&mut self, x: EventId) {
        if !self.lifted.contains(&x) {
            self.lifted.push(x);
        }
    }
}

/// `clock[at..at + vals.len()]` joined with `vals`, `clock` grown with 0s
/// as needed.
fn join_at(clock: &mut Vec<u32>, at: usize, vals: &[u32]) {
    if clock.len() < at + vals.len() {
        clock.resize(at + vals.len(), 0);
    }
    for (a, &b) in clock[at..].iter_mut().zip(vals) {
        *a = (*a).max(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry of units `0..n` of `j`'s clock, stored and read back
    /// through [`Clocks::entry`] (no owner).
    fn dense(j: &Join, n: usize) -> (Slice, Vec<u32>) {
        let mut clocks = Clocks::default();
        let clock = j.store(&mut clocks.arena);
        let v = View { clock, owner: u32::MAX, ..View::default() };
        (clock, (0..n).map(|u| clocks.entry(&v, u)).collect())
    }

    #[test]
    fn join_keeps_the_host_and_a_far_work_group_apart() {
        let mut j = Join::default();
        // A work-item of the last work-group, then the host's launch.
        j.entries(4000, &[3, 0, 5]);
        j.entries(0, &[7]);
        let (c, d) = dense(&j, 4010);
        assert_eq!((c.lo, c.base, c.len), (1, 4000, 3));
        assert_eq!((d[0], d[1], d[3999], d[4000], d[4001], d[4002], d[4003]), (7, 0, 0, 3, 0, 5, 0));
        // An entry below the window widens it; the larger entry wins.
        j.entries(3998, &[1, 0, 9]);
        let (c, d) = dense(&j, 4010);
        assert_eq!((c.lo, c.base, c.len), (1, 3998, 5));
        assert_eq!(&d[3997..4004], &[0, 1, 0, 9, 0, 5, 0]);
    }

    #[test]
    fn join_folds_the_window_into_the_prefix_once_they_touch() {
        let mut j = Join::default();
        j.event(EventId { unit: UnitId(3), index: 1 });
        j.entries(0, &[4, 0, 2]);
        let (c, d) = dense(&j, 6);
        assert_eq!((c.lo, c.len), (4, 0));
        assert_eq!(d, [4, 0, 2, 2, 0, 0]);
        // A joined join and a view with its own position.
        let mut k = Join::default();
        k.entries(10, &[1]);
        k.join(&j);
        let mut clocks = Clocks::default();
        let clock = k.store(&mut clocks.arena);
        let v = View { clock, owner: 12, own: 6, ..View::default() };
        let mut m = Join::default();
        m.view(&clocks, &v);
        let (_, d) = dense(&m, 14);
        assert_eq!(d, [4, 0, 2, 2, 0, 0, 0, 0, 0, 0, 1, 0, 6, 0]);
    }
}
