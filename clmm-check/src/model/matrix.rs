//! Dense bit matrices: the explicit representation of the relations of one
//! execution graph (`ghb`, `lhb`, `sw`, ...).

/// An `n × n` relation as bit rows.
#[derive(Clone, Debug)]
pub struct Matrix {
    n: usize,
    words: usize,
    bits: Vec<u64>,
}

impl Matrix {
    /// The empty relation over `n` elements.
    pub fn new(n: usize) -> Matrix {
        let words = n.div_ceil(64).max(1);
        Matrix { n, words, bits: vec![0; n * words] }
    }
    /// Add the pair `(i, j)`.
    #[inline]
    pub fn set(&mut self, i: usize, j: usize) {
        self.bits[i * self.words + j / 64] |= 1 << (j % 64);
    }
    /// Remove the pair `(i, j)`.
    #[inline]
    pub fn unset(&mut self, i: usize, j: usize) {
        self.bits[i * self.words + j / 64] &= !(1 << (j % 64));
    }
    /// Whether `(i, j)` is in the relation.
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> bool {
        self.bits[i * self.words + j / 64] >> (j % 64) & 1 == 1
    }
    /// Number of elements.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Replace the relation by its transitive closure (Warshall): the
    /// tests' oracle for [`Matrix::closure`].
    #[cfg(test)]
    fn close(&mut self) {
        let w = self.words;
        for k in 0..self.n {
            let (kw, kb) = (k / 64, 1u64 << (k % 64));
            for i in 0..self.n {
                if i != k && self.bits[i * w + kw] & kb != 0 {
                    for x in 0..w {
                        let v = self.bits[k * w + x];
                        self.bits[i * w + x] |= v;
                    }
                }
            }
        }
    }
    /// Add row `src` to row `dst` (every successor of `src` becomes one of
    /// `dst`).
    #[inline]
    pub fn or_row(&mut self, dst: usize, src: usize) {
        let w = self.words;
        for x in 0..w {
            let v = self.bits[src * w + x];
            self.bits[dst * w + x] |= v;
        }
    }
    /// Row `i` as words.
    pub fn row(&self, i: usize) -> &[u64] {
        &self.bits[i * self.words..(i + 1) * self.words]
    }
    /// Replace row `i`.
    pub fn set_row(&mut self, i: usize, words: &[u64]) {
        let w = self.words;
        self.bits[i * w..(i + 1) * w].copy_from_slice(words);
    }
    /// The transitive closure of the relation given by `edges` over `n`
    /// elements, computed in one pass over a topological order (each
    /// element's successors are its direct successors and theirs): linear
    /// in the edges times the row width, where Warshall is cubic. `None`
    /// when the edges have a cycle. `edges` and `start` as [`by_source`]
    /// makes them.
    fn closure_of_dag(n: usize, edges: &[(u32, u32)], start: &[u32]) -> Option<Matrix> {
        let succ = |a: usize| edges[start[a] as usize..start[a + 1] as usize].iter().map(|&(_, b)| b as usize);
        let order = topological_order(n, succ)?;
        let mut m = Matrix::new(n);
        for &a in order.iter().rev() {
            let a = a as usize;
            for b in succ(a) {
                m.or_row(a, b);
                m.set(a, b);
            }
        }
        Some(m)
    }
    /// The transitive closure of the relation given by `edges` over `n`
    /// elements, cycles included: in one pass over a topological order, or,
    /// when the edges have a cycle, the closure of their strongly connected
    /// components (Tarjan's algorithm, which yields each component after
    /// every component it reaches), each element's row that of its
    /// component. The same matrix as Warshall's (the tests compare), in
    /// time linear in the edges times the row width: an inconsistent
    /// prefix's cyclic happens-before was closed by Warshall, most of the
    /// time of the work-stealing kernels' blocked runs (session 33).
    pub fn closure(n: usize, edges: &mut [(u32, u32)]) -> Matrix {
        let start = by_source(n, edges);
        if let Some(m) = Matrix::closure_of_dag(n, edges, &start) {
            return m;
        }
        let succ = |a: usize| &edges[start[a] as usize..start[a + 1] as usize];
        let comps = strongly_connected_components(n, |a| succ(a).iter().map(|&(_, b)| b as usize));
        let mut comp_of = vec![0u32; n];
        for (c, members) in comps.iter().enumerate() {
            for &v in members {
                comp_of[v as usize] = c as u32;
            }
        }
        // Per component, in the order found (every component it reaches
        // comes before it): what its members reach.
        let mut m = Matrix::new(n);
        let words = m.words;
        let mut rows: Vec<u64> = vec![0; comps.len() * words];
        let set = |row: &mut [u64], v: usize| row[v / 64] |= 1 << (v % 64);
        for (c, members) in comps.iter().enumerate() {
            let mut row = vec![0u64; words];
            let mut cyclic = members.len() > 1;
            for &v in members {
                for &(_, w) in succ(v as usize) {
                    let d = comp_of[w as usize] as usize;
                    if d == c {
                        cyclic = true;
                        continue;
                    }
                    for (x, y) in row.iter_mut().zip(&rows[d * words..(d + 1) * words]) {
                        *x |= *y;
                    }
                    for &m in &comps[d] {
                        set(&mut row, m as usize);
                    }
                }
            }
            if cyclic {
                for &m in members {
                    set(&mut row, m as usize);
                }
            }
            rows[c * words..(c + 1) * words].copy_from_slice(&row);
        }
        for (v, &c) in comp_of.iter().enumerate() {
            let c = c as usize;
            m.set_row(v, &rows[c * words..(c + 1) * words]);
        }
        m
    }
    /// Whether some element is related to itself.
    pub fn has_reflexive(&self) -> Option<usize> {
        (0..self.n).find(|&i| self.get(i, i))
    }
    /// Whether the relation (not yet closed) has no cycle: a topological
    /// order of the rows, quadratic, where closing is cubic.
    pub fn is_acyclic(&self) -> bool {
        topological_order(self.n, |i| self.successors(i)).is_some()
    }
    /// The elements `i` is related to.
    pub fn successors(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        self.row(i).iter().enumerate().flat_map(|(w, &bits)| {
            let mut b = bits;
            std::iter::from_fn(move || {
                (b != 0).then(|| {
                    let t = b.trailing_zeros() as usize;
                    b &= b - 1;
                    w * 64 + t
                })
            })
        })
    }
    /// The union with `other`.
    pub fn union_with(&mut self, other: &Matrix) {
        for (a, b) in self.bits.iter_mut().zip(&other.bits) {
            *a |= *b;
        }
    }
}

/// Whether the relation on `n` elements given by `edges` has no cycle
/// (sorts `edges`).
pub fn edges_acyclic(n: usize, edges: &mut [(u32, u32)]) -> bool {
    let start = by_source(n, edges);
    topological_order(n, |a| edges[start[a] as usize..start[a + 1] as usize].iter().map(|&(_, b)| b as usize)).is_some()
}

/// `edges` sorted by source, and where each element's edges start in
/// them (`start[a]..start[a + 1]`).
fn by_source(n: usize, edges: &mut [(u32, u32)]) -> Vec<u32> {
    edges.sort_unstable();
    let mut start = vec![0u32; n + 1];
    for &(a, _) in edges.iter() {
        start[a as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    start
}

/// The strongly connected components of the relation whose direct
/// successors of `i` are `succ(i)` (Tarjan's algorithm, without recursion),
/// each component after every component it reaches.
fn strongly_connected_components<I: Iterator<Item = usize>>(n: usize, succ: impl Fn(usize) -> I) -> Vec<Vec<u32>> {
    const NONE: u32 = u32::MAX;
    let (mut index, mut low, mut on_stack) = (vec![NONE; n], vec![0u32; n], vec![false; n]);
    let (mut stack, mut comps, mut next) = (Vec::new(), Vec::new(), 0u32);
    // The depth-first path: each element with its successors still to see.
    let mut path: Vec<(usize, I)> = Vec::new();
    for root in 0..n {
        if index[root] != NONE {
            continue;
        }
        // The element to enter next (the root, then each unvisited
        // successor).
        let mut enter = Some(root);
        loop {
            if let Some(w) = enter.take() {
                index[w] = next;
                low[w] = next;
                next += 1;
                stack.push(w as u32);
                on_stack[w] = true;
                path.push((w, succ(w)));
            }
            let Some((v, it)) = path.last_mut() else { break };
            let v = *v;
            match it.next() {
                Some(w) if index[w] == NONE => enter = Some(w),
                Some(w) => {
                    if on_stack[w] {
                        low[v] = low[v].min(index[w]);
                    }
                }
                None => {
                    path.pop();
                    if let Some((p, _)) = path.last() {
                        low[*p] = low[*p].min(low[v]);
                    }
                    if low[v] == index[v] {
                        let mut comp = Vec::new();
                        loop {
                            let w = stack.pop().expect("the component's elements are on the stack");
                            on_stack[w as usize] = false;
                            comp.push(w);
                            if w as usize == v {
                                break;
                            }
                        }
                        comps.push(comp);
                    }
                }
            }
        }
    }
    comps
}

/// A topological order of the `n` elements under the relation whose
/// direct successors of `i` are `succ(i)` (Kahn's algorithm: linear in the
/// elements and the pairs); `None` when the relation has a cycle. The one
/// order [`Matrix::closure_of_dag`] and [`Matrix::is_acyclic`] share.
fn topological_order<I: Iterator<Item = usize>>(n: usize, succ: impl Fn(usize) -> I) -> Option<Vec<u32>> {
    let mut indeg = vec![0u32; n];
    for a in 0..n {
        for b in succ(a) {
            indeg[b] += 1;
        }
    }
    let mut order: Vec<u32> = (0..n as u32).filter(|&i| indeg[i as usize] == 0).collect();
    let mut head = 0;
    while head < order.len() {
        let a = order[head] as usize;
        head += 1;
        for b in succ(a) {
            indeg[b] -= 1;
            if indeg[b] == 0 {
                order.push(b as u32);
            }
        }
    }
    (order.len() == n).then_some(order)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn edges_acyclic_finds_cycles_and_self_loops() {
        assert!(edges_acyclic(4, &mut [(0, 1), (1, 2), (0, 2), (3, 2)]));
        assert!(!edges_acyclic(4, &mut [(0, 1), (1, 2), (2, 0), (3, 2)]));
        assert!(!edges_acyclic(2, &mut [(1, 1)]));
        assert!(edges_acyclic(3, &mut []));
        let mut m = Matrix::new(3);
        m.set(0, 1);
        m.set(1, 0);
        assert!(!m.is_acyclic());
        m.unset(1, 0);
        assert!(m.is_acyclic() && m.successors(0).eq([1]) && m.successors(1).next().is_none());
    }

    #[test]
    fn closure_finds_cycles() {
        let mut m = Matrix::new(70);
        m.set(0, 65);
        m.set(65, 3);
        assert!(m.is_acyclic());
        m.set(3, 0);
        assert!(!m.is_acyclic());
        m.close();
        assert!(m.get(65, 65) && m.get(0, 3));
    }

    #[test]
    fn closure_of_a_dag_equals_warshall() {
        // A pseudo-random DAG (edges from lower to higher, shuffled ids).
        let n = 150;
        let perm: Vec<u32> = (0..n as u32).map(|i| (i * 97) % n as u32).collect();
        let mut edges = Vec::new();
        let mut x: u64 = 12345;
        for _ in 0..400 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let a = (x >> 33) as usize % n;
            let b = (x >> 13) as usize % n;
            if a < b {
                edges.push((perm[a], perm[b]));
            }
        }
        let mut w = Matrix::new(n);
        for &(a, b) in &edges {
            w.set(a as usize, b as usize);
        }
        w.close();
        let dag = |edges: &mut Vec<(u32, u32)>| {
            let start = by_source(n, edges);
            Matrix::closure_of_dag(n, edges, &start)
        };
        let d = dag(&mut edges.clone()).expect("acyclic");
        assert_eq!(d.bits, w.bits);
        edges.push((perm[n - 1], perm[0]));
        edges.push((perm[0], perm[n - 1]));
        assert!(dag(&mut edges).is_none());
    }

    /// `Matrix::closure` equals Warshall on random relations with cycles,
    /// self-loops and isolated elements, small and wider than a word.
    #[test]
    fn closure_with_cycles_equals_warshall() {
        let mut x: u64 = 99;
        for round in 0..300 {
            let n = 1 + round % 140;
            let mut edges = Vec::new();
            for _ in 0..(round % 5 + 1) * n / 2 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                edges.push(((x >> 33) as u32 % n as u32, (x >> 13) as u32 % n as u32));
            }
            let mut w = Matrix::new(n);
            for &(a, b) in &edges {
                w.set(a as usize, b as usize);
            }
            w.close();
            assert_eq!(Matrix::closure(n, &mut edges).bits, w.bits, "round {round}");
        }
    }
}
