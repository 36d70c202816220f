//! Small parallel helpers every layer may use (it imports no layer).

use rayon::prelude::*;

/// The elements of `parts`, in order, each mapped by `f`, in one output vector that every
/// part writes into its own share of on its own task (no intermediate lists).
pub(crate) fn map_concat<S: Sync, T: Send + Clone + Default>(
    parts: &[&[S]],
    f: impl Fn(&S) -> T + Sync,
) -> Vec<T> {
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let mut out = vec![T::default(); total];
    let mut shares = Vec::with_capacity(parts.len());
    let mut rest = out.as_mut_slice();
    for part in parts {
        let (share, tail) = rest.split_at_mut(part.len());
        shares.push(share);
        rest = tail;
    }
    shares
        .into_par_iter()
        .zip(parts.par_iter())
        .for_each(|(share, part)| {
            for (slot, item) in share.iter_mut().zip(part.iter()) {
                *slot = f(item);
            }
        });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_mapped_in_order() {
        let (a, b, c) = (vec![1u32, 2, 3], Vec::new(), vec![4u32]);
        let parts: Vec<&[u32]> = vec![&a, &b, &c];
        assert_eq!(map_concat(&parts, |&x| u64::from(x) * 10), [10, 20, 30, 40]);
        assert!(map_concat::<u32, u32>(&[], |&x| x).is_empty());
    }
}
