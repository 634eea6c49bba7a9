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
    /// Whether `(i, j)` is in the relation.
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> bool {
        self.bits[i * self.words + j / 64] >> (j % 64) & 1 == 1
    }
    /// Number of elements.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Replace the relation by its transitive closure (Warshall).
    pub fn close(&mut self) {
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
    /// Whether some element is related to itself.
    pub fn has_reflexive(&self) -> Option<usize> {
        (0..self.n).find(|&i| self.get(i, i))
    }
    /// Whether the relation (not yet closed) has a cycle.
    pub fn is_acyclic(&self) -> bool {
        let mut c = self.clone();
        c.close();
        c.has_reflexive().is_none()
    }
    /// The union with `other`.
    pub fn union_with(&mut self, other: &Matrix) {
        for (a, b) in self.bits.iter_mut().zip(&other.bits) {
            *a |= *b;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
}
