//! The flat index's tests: runs, builds, derivations and old counts against plain lists.

use super::*;
use crate::pma::{GroupLeaf, GroupMapLeaf, PlainLeaf};
use proptest::prelude::*;

/// Every vertex's run read through the index, as `(vertex, target)` pairs.
fn runs<C: LeafCodec>(edges: &Pma<C>, n: usize) -> Vec<(u64, u64)> {
    let index = RunIndex::build(edges, n);
    let mut out = Vec::new();
    for v in 0..n as VertexId {
        index.for_each(edges, v, |item| {
            let key = C::key(item);
            out.push((key >> 32, key & 0xffff_ffff));
            true
        });
    }
    out
}

/// Arcs `(u, v >> 8·shift)` of `(u, v, shift)` triples: targets of every width, sorted,
/// without repeats.
fn narrowed(set: &std::collections::BTreeSet<(u64, u32, u32)>) -> Vec<(u64, u64)> {
    set.iter()
        .map(|&(u, v, shift)| (u, u64::from(v >> (8 * shift))))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

fn keys_of(arcs: &[(u64, u64)]) -> Vec<u64> {
    arcs.iter().map(|&(u, v)| u << 32 | v).collect()
}

#[test]
fn runs_read_back_whole_after_wide_targets_and_in_maps() {
    // Wide targets before a run (the first key's low half is below its predecessor's),
    // the largest target, and weighted items (the first item's value read at its end).
    let arcs = [
        (1, 0xffff_fff0),
        (2, 5),
        (2, 7),
        (4, u64::from(u32::MAX)),
        (5, 0),
    ];
    let keys = keys_of(&arcs);
    assert_eq!(
        runs(&Pma::<GroupLeaf>::from_sorted(&keys).unwrap(), 6),
        arcs
    );
    assert_eq!(
        runs(&Pma::<PlainLeaf>::from_sorted(&keys).unwrap(), 6),
        arcs
    );
    let items: Vec<(u64, u64)> = keys.iter().map(|&k| (k, k ^ 0xabc)).collect();
    let weighted = Pma::<GroupMapLeaf>::from_sorted(&items).unwrap();
    let index = RunIndex::build(&weighted, 6);
    let mut seen = Vec::new();
    index.for_each(&weighted, 2, |item| {
        seen.push(item);
        true
    });
    assert_eq!(
        seen,
        [(keys[1], keys[1] ^ 0xabc), (keys[2], keys[2] ^ 0xabc)]
    );
}

#[test]
fn prefetch_takes_any_vertex() {
    // Vertices with no arcs, one arc, a run ending a leaf, and past the index: a hint
    // reads nothing and never goes out of bounds.
    let keys: Vec<u64> = (0..300u64).map(|i| (i % 7) << 32 | (i / 7)).collect();
    let mut keys = keys;
    keys.sort_unstable();
    keys.push(9 << 32);
    let edges = Pma::<GroupLeaf>::from_sorted(&keys).unwrap();
    let index = RunIndex::build(&edges, 12);
    for v in 0..20 {
        index.prefetch(&edges, v);
        // Every step of the staged prefetch, and steps past the last (taken as the last).
        for stage in 0..6 {
            index.prefetch_stage(&edges, v, stage);
        }
    }
    assert_eq!(index.degree(9), 1);
    assert_eq!(runs(&edges, 12).len(), keys.len());
    // A map, whose one-arc runs are prefetched too (the value is in the leaf), and an
    // empty array with an index longer than it.
    let items: Vec<(u64, u64)> = keys.iter().map(|&k| (k, !k)).collect();
    let weighted = Pma::<GroupMapLeaf>::from_sorted(&items).unwrap();
    let index = RunIndex::build(&weighted, 12);
    let empty = Pma::<GroupLeaf>::from_sorted(&[]).unwrap();
    let empty_index = RunIndex::build(&empty, 5);
    for v in 0..20 {
        for stage in 0..5 {
            index.prefetch_stage(&weighted, v, stage);
            empty_index.prefetch_stage(&empty, v, stage);
        }
    }
}

proptest! {
    /// Runs read through the 12-byte cursors equal the arcs, for arbitrary targets, with
    /// runs starting at leaf heads, mid-leaf and as a leaf's last entry.
    #[test]
    fn runs_match_the_arcs(
        set in proptest::collection::btree_set((0u64..40, any::<u32>()), 0..600),
    ) {
        let arcs: Vec<(u64, u64)> = set.iter().map(|&(u, v)| (u, u64::from(v))).collect();
        let keys = keys_of(&arcs);
        prop_assert_eq!(runs(&Pma::<GroupLeaf>::from_sorted(&keys).unwrap(), 40), arcs.clone());
        prop_assert_eq!(runs(&Pma::<PlainLeaf>::from_sorted(&keys).unwrap(), 40), arcs);
    }

    /// Indexes built by parallel chunks of 1, 2, 3 and 64 leaves, in segments of 1 to 64
    /// vertices and chunks of 1 to 256, give every vertex's degree and run, on skewed
    /// graphs whose low vertices' runs cross chunks or span whole ones (chunks where no
    /// run starts).
    #[test]
    fn chunked_builds_match_the_arcs(
        set in proptest::collection::btree_set(((0u64..40).prop_map(|x| x * x / 40), any::<u32>()), 0..1500),
        empty_tail in 0u64..3,
        hole in proptest::option::of((0u64..40, 0u64..40)),
    ) {
        let mut arcs: Vec<(u64, u64)> = set.iter().map(|&(u, v)| (u, u64::from(v))).collect();
        let mut edges = Pma::<GroupLeaf>::from_sorted(&keys_of(&arcs)).unwrap();
        // Removing a range of vertices' arcs leaves empty leaves between chunks.
        if let Some((a, b)) = hole {
            let gone: Vec<(u64, u64)> =
                arcs.iter().copied().filter(|&(u, _)| (a.min(b)..=a.max(b)).contains(&u)).collect();
            edges.remove_batch(&keys_of(&gone));
            arcs.retain(|arc| !gone.contains(arc));
        }
        // Vertices past the last with arcs have none.
        let n = 40 + empty_tail as usize;
        let mut degrees = vec![0u32; n];
        for &(u, _) in &arcs {
            degrees[u as usize] += 1;
        }
        for (grain, shift, chunk) in [(1, 0, 0), (2, 1, 3), (3, 3, 4), (64, 6, 8)] {
            let index = RunIndex::build_in_chunks(&edges, n, grain, shift, chunk);
            prop_assert_eq!(index.check_layout(n), Ok(()));
            prop_assert_eq!(&index.degrees(), &degrees, "grain {}", grain);
            let mut read = Vec::new();
            for v in 0..n as VertexId {
                index.for_each(&edges, v, |key| {
                    read.push((key >> 32, key & 0xffff_ffff));
                    true
                });
            }
            prop_assert_eq!(&read, &arcs, "grain {}", grain);
        }
    }

    /// A bitmap word's runs, read a segment's entries at a time (`for_each_of_word`), equal
    /// the runs read vertex by vertex, each stopped after its first `stop` arcs, for any
    /// word of vertices (some without arcs, some past the index), with segments of 1, 4,
    /// 8 and 64 vertices, on a set and a map.
    #[test]
    fn word_runs_match_the_runs_vertex_by_vertex(
        set in proptest::collection::btree_set((0u64..150, any::<u32>(), 0u32..4), 0..2000),
        words in proptest::collection::vec(any::<u64>(), 3),
        stop in 1usize..4,
    ) {
        let arcs = narrowed(&set);
        let keys = keys_of(&arcs);
        let edges = Pma::<GroupLeaf>::from_sorted(&keys).unwrap();
        let items: Vec<(u64, u64)> = keys.iter().map(|&k| (k, k.rotate_left(7))).collect();
        let map = Pma::<GroupMapLeaf>::from_sorted(&items).unwrap();
        fn check<C: LeafCodec>(edges: &Pma<C>, words: &[u64], stop: usize) -> Result<(), TestCaseError> {
            for shift in [0, 2, 3, 6] {
                // 140 vertices indexed: the third word's last 52 lie past the index.
                let index = RunIndex::build_in_chunks(edges, 140, BUILD_GRAIN, shift, shift + 2);
                for (w, &word) in words.iter().enumerate() {
                    let base = 64 * w as VertexId;
                    let mut got = Vec::new();
                    let mut taken = 0;
                    let mut last = None;
                    index.for_each_of_word(edges, base, word, |v, item| {
                        if last != Some(v) {
                            (last, taken) = (Some(v), 0);
                        }
                        got.push((v, item));
                        taken += 1;
                        taken < stop
                    });
                    let mut want = Vec::new();
                    for i in (0..64).filter(|&i| word >> i & 1 == 1) {
                        let v = base + i;
                        let mut taken = 0;
                        index.for_each(edges, v, |item| {
                            want.push((v, item));
                            taken += 1;
                            taken < stop
                        });
                    }
                    prop_assert_eq!(&got, &want, "shift {}, word {}", shift, w);
                }
            }
            Ok(())
        }
        check(&edges, &words, stop)?;
        check(&map, &words, stop)?;
    }

    /// The targets of a range of vertices, decoded in two halves side by side when the
    /// range holds `PAIR_MIN_ARCS` arcs or more, equal the arcs, for ranges of every
    /// width from every start.
    #[test]
    fn range_targets_match_the_arcs(
        set in proptest::collection::btree_set((0u64..60, any::<u32>(), 0u32..4), 0..3000),
        widths in proptest::collection::vec(1u32..70, 1..4),
    ) {
        let arcs = narrowed(&set);
        let keys = keys_of(&arcs);
        let edges = Pma::<GroupLeaf>::from_sorted(&keys).unwrap();
        let mut out = vec![9; 5];
        // Segments of 4 vertices (ranges across several) and of 64 (one).
        for (width, shift) in widths.into_iter().flat_map(|w| [(w, 2), (w, 6)]) {
            let index = RunIndex::build_in_chunks(&edges, 60, BUILD_GRAIN, shift, shift + 1);
            for start in (0..62u32).step_by(width as usize) {
                index.targets_in(&edges, start..start + width, &mut out);
                let want: Vec<VertexId> = arcs
                    .iter()
                    .filter(|&&(u, _)| (u64::from(start)..u64::from(start + width)).contains(&u))
                    .map(|&(_, v)| v as VertexId)
                    .collect();
                prop_assert_eq!(&out, &want, "vertices {}..{}", start, start + width);
                // The split point of a pair decode: the first vertex with arcs, after
                // the range's first, whose run starts at or past the middle.
                let (from, end) = (start as usize, (start + width).min(60) as usize);
                let degrees = index.degrees();
                let Some(first) = (from..end).find(|&v| degrees[v] > 0) else {
                    continue;
                };
                let count = want.len();
                let mut before = 0;
                let mut split = None;
                for (v, &d) in degrees.iter().enumerate().take(end).skip(first) {
                    let d = d as usize;
                    if v > first && d > 0 && 2 * before >= count {
                        split = Some((v, before));
                        break;
                    }
                    before += d;
                }
                prop_assert_eq!(index.middle(first, end, count), split);
            }
        }
    }

    /// An index derived from an earlier version's after a batch of inserts and deletes
    /// (`update_from`) gives every vertex the degree and run of a plain list of the arcs,
    /// over several versions in a row, shares every segment whose entries did not
    /// change, and copies no segment for a batch that changes no arc.
    #[test]
    fn derived_indexes_match_a_plain_list(
        set in proptest::collection::btree_set((0u64..300, 0u64..300), 0..3000),
        steps in proptest::collection::vec(
            (proptest::collection::vec((0u64..320, 0u64..320), 0..5), any::<bool>()),
            1..6,
        ),
        shift in 0u32..5,
        chunk in 0u32..3,
    ) {
        let mut arcs: Vec<(u64, u64)> = set.into_iter().collect();
        let config = crate::pma::PmaConfig { leaf_bytes: Some(256), ..Default::default() };
        let mut edges =
            Pma::<GroupLeaf>::from_sorted_with_config(&keys_of(&arcs), config).unwrap();
        let mut n = 300;
        let mut index = RunIndex::build_in_chunks(&edges, n, BUILD_GRAIN, shift, shift + chunk);
        for (batch, insert) in steps {
            let base_edges = edges.clone();
            let keys = keys_of(&batch);
            if insert {
                edges.insert_batch(&keys);
                arcs.extend(batch.iter().copied());
                arcs.sort_unstable();
                arcs.dedup();
                n = n.max(batch.iter().map(|&(u, _)| u as usize + 1).max().unwrap_or(0));
            } else {
                edges.remove_batch(&keys);
                arcs.retain(|arc| !batch.contains(arc));
            }
            let Some(next) = RunIndex::update_from(&index, &base_edges, &edges, n) else {
                // A changed layout or most leaves changed: the caller builds in full.
                index = RunIndex::build_in_chunks(&edges, n, BUILD_GRAIN, shift, shift + chunk);
                continue;
            };
            prop_assert_eq!(next.check_layout(n), Ok(()));
            let mut degrees = vec![0u32; n];
            for &(u, _) in &arcs {
                degrees[u as usize] += 1;
            }
            prop_assert_eq!(&next.degrees(), &degrees);
            let mut read = Vec::new();
            for v in 0..n as VertexId {
                next.for_each(&edges, v, |key| {
                    read.push((key >> 32, key & 0xffff_ffff));
                    true
                });
            }
            prop_assert_eq!(&read, &arcs);
            // Only segments whose entries changed are copied.
            for (k, (segment, old)) in next.segments().zip(index.segments()).enumerate() {
                if segment == old {
                    prop_assert!(Arc::ptr_eq(&segment.entries, &old.entries), "segment {} copied unchanged", k);
                }
            }
            // A batch that changed no arc copies no segment.
            if base_edges.iter().eq(edges.iter()) && n == index.len {
                for (segment, old) in next.segments().zip(index.segments()) {
                    prop_assert!(Arc::ptr_eq(&segment.entries, &old.entries));
                }
                prop_assert!(Arc::ptr_eq(&next.chunks, &index.chunks));
            }
            index = next;
        }
    }
}

/// Per-vertex counts with a vertex's consecutive pieces added up.
fn merged(counts: &[(u64, u32)]) -> Vec<(u64, u32)> {
    let mut out: Vec<(u64, u32)> = Vec::new();
    for &(v, n) in counts {
        match out.last_mut() {
            Some(last) if last.0 == v => last.1 += n,
            _ => out.push((v, n)),
        }
    }
    out
}

proptest! {
    /// The earlier version's counts read from the index (the first and last vertex's
    /// decoded, the others' degrees) equal a decode of the leaves, for every range of
    /// leaves, with runs spanning several leaves, empty leaves and the array's end;
    /// with an entry above the first vertex changed by an earlier range, the caller is
    /// sent to decode.
    #[test]
    fn old_counts_match_a_decode(
        set in proptest::collection::btree_set(((0u64..200).prop_map(|x| x * x / 200), 0u64..400), 0..2500),
        hole in proptest::option::of((0u64..200, 0u64..200)),
        ranges in proptest::collection::vec((0usize..64, 1usize..6), 1..8),
    ) {
        let arcs: Vec<(u64, u64)> = set.into_iter().collect();
        let config = crate::pma::PmaConfig { leaf_bytes: Some(256), ..Default::default() };
        let mut edges =
            Pma::<GroupLeaf>::from_sorted_with_config(&keys_of(&arcs), config).unwrap();
        if let Some((a, b)) = hole {
            let gone: Vec<(u64, u64)> = arcs
                .iter()
                .copied()
                .filter(|&(u, _)| (a.min(b)..=a.max(b)).contains(&u))
                .collect();
            edges.remove_batch(&keys_of(&gone));
        }
        let n = 203;
        let index = RunIndex::build(&edges, n);
        let leaves = edges.num_leaves();
        for (start, len) in ranges {
            let start = start % (leaves + 1);
            let range = start..(start + len).min(leaves);
            let want = merged(&decoded_counts(&edges, range.clone()));
            match index.old_counts(&edges, range.clone(), None) {
                Some(got) => prop_assert_eq!(merged(&got), want.clone(), "leaves {:?}", range),
                None => prop_assert!(
                    want.len() < 2
                        || (want[want.len() - 1].0 - want[0].0) as usize
                            > OLD_WALK_PER_LEAF * range.len()
                ),
            }
            if let Some(&(first, _)) = want.first() {
                let above = Some(first as usize + 1);
                prop_assert!(index.old_counts(&edges, range.clone(), above).is_none());
            }
        }
    }
}

/// Reads every vertex's arcs through `index` and compares them, and the degrees, with
/// a fresh build's.
fn assert_matches_build(index: &RunIndex, edges: &Pma<GroupLeaf>, n: usize) {
    let fresh = RunIndex::build(edges, n);
    assert_eq!(index.degrees(), fresh.degrees());
    for v in 0..n as VertexId {
        let (mut mine, mut theirs) = (Vec::new(), Vec::new());
        index.for_each(edges, v, |key| {
            mine.push(key);
            true
        });
        fresh.for_each(edges, v, |key| {
            theirs.push(key);
            true
        });
        assert_eq!(mine, theirs, "vertex {v}");
    }
    assert_eq!(index.check_layout(n), Ok(()));
}

/// A long run whose keys in its first leaf are all deleted starts past the changed
/// leaves; a run that starts before the changed leaves keeps its start while its degree
/// changes; neither is re-scanned beyond the changed leaves.
#[test]
fn runs_crossing_changed_leaves_keep_or_move_their_starts() {
    let config = crate::pma::PmaConfig {
        leaf_bytes: Some(256),
        ..Default::default()
    };
    let mut arcs: Vec<(u64, u64)> = (0..40).map(|t| (0, t)).collect();
    arcs.extend((0..3000).map(|t| (1, 2 * t)));
    arcs.extend((0..40).map(|t| (2, t)));
    let n = 3;
    let base_edges = Pma::<GroupLeaf>::from_sorted_with_config(&keys_of(&arcs), config).unwrap();
    let base = RunIndex::build(&base_edges, n);
    // Vertex 1's keys in the first leaf of its run, all deleted.
    let first = base.start(1).leaf();
    let pieces = base_edges.run_pieces_in(32, first..first + 1);
    let piece = pieces.iter().find(|p| p.group == 1).unwrap();
    let doomed: Vec<u64> = (0..u64::from(piece.len))
        .map(|t| (1 << 32) | (2 * t))
        .collect();
    let mut edges = base_edges.clone();
    edges.remove_batch(&doomed);
    let next = RunIndex::update_from(&base, &base_edges, &edges, n).unwrap();
    assert_eq!(next.degree(1), 3000 - doomed.len());
    assert_matches_build(&next, &edges, n);
    // Odd targets inside vertex 1's run, far from its start: its start stays.
    let mut later = edges.clone();
    later.insert_batch(&[1 << 32 | 4001, 1 << 32 | 5001]);
    let last = RunIndex::update_from(&next, &edges, &later, n).unwrap();
    assert_eq!(last.start(1), next.start(1));
    assert_eq!(last.degree(1), next.degree(1) + 2);
    assert_matches_build(&last, &later, n);
}

/// Counts that contradict the base index (here an index of another array) make the
/// derivation give up, so that the caller builds in full.
#[test]
fn a_base_index_of_other_runs_is_not_derived_from() {
    let keys: Vec<u64> = (0..200_000u64).map(|t| 1 << 32 | t).collect();
    let base_edges = Pma::<GroupLeaf>::from_sorted(&keys).unwrap();
    let empty = RunIndex::build(&Pma::<GroupLeaf>::from_sorted(&[]).unwrap(), 2);
    let mut edges = base_edges.clone();
    edges.remove_batch(&[1 << 32 | 7]);
    assert!(RunIndex::update_from(&empty, &base_edges, &edges, 2).is_none());
}

#[test]
fn one_new_arc_copies_the_segments_of_its_leafs_vertices() {
    // 100 000 vertices in 1-arc runs: a new arc moves the runs of the vertices after it in
    // its leaf only, so only the segments holding those vertices are copied (and the
    // chunks holding them), the rest are shared.
    let keys: Vec<u64> = (0..100_000u64).map(|u| u << 32 | (u + 1)).collect();
    let base_edges = Pma::<GroupLeaf>::from_sorted(&keys).unwrap();
    let base = RunIndex::build(&base_edges, 100_001);
    let mut edges = base_edges.clone();
    edges.insert(50_000 << 32);
    let next = RunIndex::update_from(&base, &base_edges, &edges, 100_001).unwrap();
    // The vertices with keys in the leaves the insert changed.
    let changed = edges.changed_since(&base_edges).unwrap();
    let touched: Vec<u64> = changed
        .iter()
        .flat_map(|leaves| edges.run_pieces_in(32, leaves.clone()))
        .map(|piece| piece.group)
        .collect();
    let (low, high) = (touched[0] as usize, *touched.last().unwrap() as usize);
    let size = 1usize << next.segment_shift;
    let copied: Vec<usize> = next
        .segments()
        .zip(base.segments())
        .enumerate()
        .filter(|(_, (a, b))| !Arc::ptr_eq(&a.entries, &b.entries))
        .map(|(k, _)| k)
        .collect();
    assert!(!copied.is_empty());
    for &k in &copied {
        assert!(
            (low / size..=high / size).contains(&k),
            "segment {k} copied, vertices {low}..={high} touched"
        );
    }
    let chunks_copied = next
        .chunks
        .iter()
        .zip(base.chunks.iter())
        .filter(|(a, b)| !Arc::ptr_eq(a, b))
        .count();
    let mut chunks_of_copied: Vec<usize> = copied
        .iter()
        .map(|k| k >> (next.chunk_shift - next.segment_shift))
        .collect();
    chunks_of_copied.dedup();
    assert_eq!(chunks_copied, chunks_of_copied.len());
    assert_eq!(next.degree(50_000), 2);
    assert_eq!(next.check_layout(100_001), Ok(()));
}

/// A vertex that loses its last arc gives up its entry and one that gets its first arc
/// takes one: the segments keep entries only for vertices with arcs, a segment left
/// without any shares nothing but its empty entry, and the index reads as a fresh build.
#[test]
fn entries_come_and_go_with_a_vertexs_first_and_last_arc() {
    // Even vertices have arcs, odd ones none.
    let arcs: Vec<(u64, u64)> = (0..4096u64)
        .filter(|u| u % 2 == 0)
        .flat_map(|u| (0..3).map(move |t| (u, t)))
        .collect();
    let n = 4096;
    let config = crate::pma::PmaConfig {
        leaf_bytes: Some(256),
        ..Default::default()
    };
    let base_edges = Pma::<GroupLeaf>::from_sorted_with_config(&keys_of(&arcs), config).unwrap();
    let base = RunIndex::build(&base_edges, n);
    assert_eq!(base.segment(10).mask, 0x5555_5555_5555_5555);
    let mut edges = base_edges.clone();
    // Vertex 10 loses its arcs, 11 gets one, and the segment of 192..256 empties.
    let mut gone: Vec<u64> = (0..3).map(|t| 10 << 32 | t).collect();
    gone.extend(
        (192..256u64)
            .filter(|u| u % 2 == 0)
            .flat_map(|u| (0..3).map(move |t| u << 32 | t)),
    );
    edges.remove_batch(&gone);
    edges.insert_batch(&[11 << 32 | 7]);
    let next = RunIndex::update_from(&base, &base_edges, &edges, n).unwrap();
    assert_matches_build(&next, &edges, n);
    assert_eq!(
        next.segment(10).mask,
        0x5555_5555_5555_5555 & !(1 << 10) | 1 << 11
    );
    assert_eq!((next.degree(10), next.degree(11)), (0, 1));
    let last = next.segment(200);
    assert_eq!((last.mask, last.entries.len()), (0, 1));
    // The base version still reads as before.
    assert_matches_build(&base, &base_edges, n);
}

/// Segments stay 64 entries at every size; chunks hold about the cube root of the
/// segment count, at least two segments.
#[test]
fn level_shifts_keep_segments_short() {
    assert_eq!(level_shifts(0), (SEGMENT_SHIFT, SEGMENT_SHIFT + 1));
    assert_eq!(level_shifts(1 << 20), (SEGMENT_SHIFT, SEGMENT_SHIFT + 5));
    assert_eq!(level_shifts(1 << 26), (SEGMENT_SHIFT, SEGMENT_SHIFT + 7));
    assert_eq!(level_shifts(usize::MAX).1, SEGMENT_SHIFT + 10);
}
