//! Sorting through one routine for the whole crate.
//!
//! Each `slice::sort_by` call with its own element type or closure instantiates the standard
//! library's sort afresh: several kilobytes of WebAssembly per call site, about 76 KB over the
//! page's twenty. [`sort_by`] sorts a permutation of indices through a `dyn` comparator
//! instead, so the site carries a single copy of the sort, and then moves the elements into
//! place. Stable, like `slice::sort_by`: equal elements keep their order. A tidy test keeps
//! every other sort out of `src/`.

use std::cmp::Ordering;

/// Sorts `v` stably by `cmp` (as `v.sort_by(cmp)` would).
pub fn sort_by<T>(v: &mut [T], cmp: impl Fn(&T, &T) -> Ordering) {
    let mut order: Vec<usize> = (0..v.len()).collect();
    sort_indices(&mut order, &|a, b| cmp(&v[a], &v[b]));
    permute(v, &order);
}

/// Sorts `v` stably by `key` (as `v.sort_by_key(key)` would).
pub fn sort_by_key<T, K: Ord>(v: &mut [T], key: impl Fn(&T) -> K) {
    sort_by(v, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `v` in its natural order (as `v.sort()` would).
pub fn sort<T: Ord>(v: &mut [T]) {
    sort_by(v, T::cmp);
}

/// Sorts numbers by [`f64::total_cmp`] (NaNs last, -0 before +0).
pub fn sort_f64(v: &mut [f64]) {
    sort_by(v, f64::total_cmp);
}

/// The crate's one instantiation of the standard library's sort.
#[inline(never)]
fn sort_indices(order: &mut [usize], cmp: &dyn Fn(usize, usize) -> Ordering) {
    order.sort_by(|a, b| cmp(*a, *b));
}

/// Rearranges `v` so that position `i` holds what was at `order[i]`, following each cycle of
/// the permutation once (linear time, no copies of `T`).
fn permute<T>(v: &mut [T], order: &[usize]) {
    let mut placed = vec![false; v.len()];
    for start in 0..v.len() {
        let mut i = start;
        while !placed[i] {
            placed[i] = true;
            let from = order[i];
            if from == start {
                break;
            }
            v.swap(i, from);
            i = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator, so that the test needs no randomness crate.
    fn numbers(n: usize, seed: u64) -> Vec<u64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (x >> 33) % 50
            })
            .collect()
    }

    #[test]
    fn sorts_as_the_standard_librarys_stable_sort_does() {
        for (n, seed) in [(0, 1), (1, 2), (2, 3), (7, 4), (100, 5), (1000, 6)] {
            // Pairs of (key, original position): stability shows in the positions.
            let v: Vec<(u64, usize)> = numbers(n, seed).into_iter().zip(0..).collect();
            let mut ours = v.clone();
            sort_by(&mut ours, |a, b| a.0.cmp(&b.0));
            let mut std = v.clone();
            std.sort_by_key(|a| a.0);
            assert_eq!(ours, std, "n = {n}");
            let mut by_key = v.clone();
            sort_by_key(&mut by_key, |p| std::cmp::Reverse(p.0));
            let mut std_key = v;
            std_key.sort_by_key(|p| std::cmp::Reverse(p.0));
            assert_eq!(by_key, std_key);
        }
    }

    #[test]
    fn numbers_sort_by_total_order_and_owned_values_move_whole() {
        let mut v = vec![3.0, f64::NAN, -1.0, 0.0, -0.0, 2.5];
        sort_f64(&mut v);
        assert_eq!(format!("{v:?}"), "[-1.0, -0.0, 0.0, 2.5, 3.0, NaN]");
        let mut words: Vec<String> = ["pp", "tp", "ddp", "cp"].iter().map(|s| s.to_string()).collect();
        sort(&mut words);
        assert_eq!(words, ["cp", "ddp", "pp", "tp"]);
    }
}
