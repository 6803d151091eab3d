//! A first-in first-out ring of `Copy` values for the per-packet path: a
//! power-of-two buffer indexed by wrapping counters, so that taking the
//! front is a mask and an increment (a `VecDeque` also checks its wrap
//! against a capacity that need not be a power of two).

/// A FIFO of `T`, growing by doubling.
#[derive(Clone, Debug)]
pub struct Ring<T> {
    buf: Vec<T>,
    /// Counters of values taken and pushed (wrapping); the value at
    /// counter `i` lives at `buf[i & (buf.len() - 1)]`.
    head: usize,
    tail: usize,
}

impl<T> Default for Ring<T> {
    fn default() -> Self {
        Ring {
            buf: Vec::new(),
            head: 0,
            tail: 0,
        }
    }
}

impl<T: Copy + Default> Ring<T> {
    #[inline]
    pub fn len(&self) -> usize {
        self.tail.wrapping_sub(self.head)
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == self.tail
    }

    #[inline]
    fn mask(&self) -> usize {
        self.buf.len().wrapping_sub(1)
    }

    #[inline]
    pub fn front(&self) -> Option<&T> {
        if self.is_empty() {
            return None;
        }
        self.buf.get(self.head & self.mask())
    }

    #[inline]
    pub fn back(&self) -> Option<&T> {
        if self.is_empty() {
            return None;
        }
        self.buf.get(self.tail.wrapping_sub(1) & self.mask())
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        let v = *self.front()?;
        self.head = self.head.wrapping_add(1);
        Some(v)
    }

    #[inline]
    pub fn push_back(&mut self, v: T) {
        if self.len() == self.buf.len() {
            self.grow();
        }
        let i = self.tail & self.mask();
        self.buf[i] = v;
        self.tail = self.tail.wrapping_add(1);
    }

    /// Double the buffer (at least 8), keeping the order.
    #[cold]
    fn grow(&mut self) {
        let n = self.len();
        let mut buf = vec![T::default(); (2 * self.buf.len()).max(8)];
        for (k, slot) in buf.iter_mut().take(n).enumerate() {
            *slot = self.buf[self.head.wrapping_add(k) & self.mask()];
        }
        self.buf = buf;
        self.head = 0;
        self.tail = n;
    }

    /// The values from front to back.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        (0..self.len()).map(move |k| &self.buf[self.head.wrapping_add(k) & self.mask()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    #[test]
    fn matches_a_vecdeque_through_growth_and_wraps() {
        let mut r = Ring::default();
        let mut d = VecDeque::new();
        let mut x = 7u64;
        for i in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Pushes win early (growth), then the two balance (wraps).
            if (x >> 33) % 100 < if i < 5000 { 70 } else { 50 } {
                r.push_back(i);
                d.push_back(i);
            } else {
                assert_eq!(r.pop_front(), d.pop_front());
            }
            assert_eq!(r.len(), d.len());
            assert_eq!(r.front(), d.front());
            assert_eq!(r.back(), d.back());
        }
        assert!(r.iter().eq(d.iter()));
        while let Some(v) = d.pop_front() {
            assert_eq!(r.pop_front(), Some(v));
        }
        assert!(r.is_empty() && r.pop_front().is_none() && r.front().is_none());
    }
}
