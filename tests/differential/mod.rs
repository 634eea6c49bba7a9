//! What the differential tests (`lb_differential.rs`,
//! `ra_rmw_differential.rs`, `scoped_differential.rs`) share: their
//! program generator's random numbers, the brute forces' enumeration of
//! choices and transitive closure, and the seeds of their sweeps.

/// A small deterministic generator (splitmix64), so the programs are the
/// same on every machine.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }

    /// One of `xs`, uniformly.
    #[allow(dead_code)] // lb_differential.rs draws no orders
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.range(0, xs.len() - 1)]
    }
}

/// Every permutation of `xs`.
pub fn permutations(xs: &[usize]) -> Vec<Vec<usize>> {
    if xs.is_empty() {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for i in 0..xs.len() {
        let mut rest = xs.to_vec();
        let x = rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, x);
            out.push(p);
        }
    }
    out
}

/// The next choice of an odometer whose digit `i` runs over `0..len(i)`,
/// the first digit turning fastest; false once every choice was given
/// (`pick` is back at zeros).
pub fn next_choice(pick: &mut [usize], len: impl Fn(usize) -> usize) -> bool {
    for (i, p) in pick.iter_mut().enumerate() {
        *p += 1;
        if *p < len(i) {
            return true;
        }
        *p = 0;
    }
    false
}

/// The seeds `from..to` of environment variable `var` (a sweep run by
/// hand), or `default` when it is not set.
pub fn seeds_from_env(var: &str, default: std::ops::Range<u64>) -> std::ops::Range<u64> {
    let Ok(s) = std::env::var(var) else { return default };
    let parsed = s.split_once("..").and_then(|(a, b)| Some(a.trim().parse().ok()?..b.trim().parse().ok()?));
    parsed.unwrap_or_else(|| panic!("{var}={s:?}: expected from..to, for example 0..20000"))
}

/// The seeds listed in environment variable `var` (`a,b,...`, for the
/// hand-run helpers that show or shrink given programs); none when it is
/// not set.
#[allow(dead_code)] // lb_differential.rs has no such helper
pub fn seed_list_from_env(var: &str) -> Vec<u64> {
    let Ok(s) = std::env::var(var) else { return Vec::new() };
    s.split(',').filter(|x| !x.trim().is_empty()).map(|x| x.trim().parse().unwrap_or_else(|_| panic!("{var}={s:?}: expected seeds separated by commas, for example 6858,44376"))).collect()
}

/// The transitive closure of a relation given as bit rows (`rows[a]` has
/// bit `b` for the edge `a -> b`), in place (Floyd-Warshall).
#[allow(dead_code)] // lb_differential.rs does not use it
pub fn close(rows: &mut [u64]) {
    for k in 0..rows.len() {
        for a in 0..rows.len() {
            if rows[a] >> k & 1 == 1 {
                rows[a] |= rows[k];
            }
        }
    }
}

/// The events of a candidate graph whose rf edge is left out of the
/// relation `po | rf-into-RMWs` whose cycles clmm's default mode does not
/// explore (Deviation 7 of `clmm_check::model`): the reads whose own edge
/// is left out (`own`: loads, and failing compare-exchanges when they
/// speculate), and each RMW read (`rmw`) that reads what the previous read
/// of its unit and location (`before(p, b)`: `p` is such a read before
/// `b`) reads when that one's edge is left out: it may read that read's
/// promise (`Engine::push_read_promised` in `clmm_check::explore`), and a
/// cycle through its edge runs through that read's as well.
#[allow(dead_code)] // lb_differential.rs has no RMWs
pub fn free_reads(locs: usize, n: usize, read: impl Fn(usize) -> bool, own: impl Fn(usize) -> bool, rmw: impl Fn(usize) -> bool, before: impl Fn(usize, usize) -> bool, rf: &[usize]) -> Vec<bool> {
    let mut free = vec![false; n];
    for b in (locs..n).filter(|&b| read(b)) {
        let prev = (locs..b).rev().find(|&p| read(p) && before(p, b));
        free[b] = own(b) || (rmw(b) && prev.is_some_and(|p| free[p] && rf[p] == rf[b]));
    }
    free
}
