use super::*;

/// Unit hashes are part of the format: every directory written so far names its units
/// by them. Values from the reference XXH3-128 (Python's `xxhash`, seeded with the
/// kind), across the sizes where its code paths change (16, 128, 240 bytes, one block,
/// many stripes), so that a hash crate or its SIMD dispatch cannot change them.
#[test]
fn unit_hashes_are_the_reference_xxh3_128_seeded_with_the_kind() {
    let payload = |n: usize| -> Vec<u8> { (0..n).map(|i| ((i * 31 + 7) % 251) as u8).collect() };
    for (len, want) in [
        (0, 0x08fd21b88fb9360390d1db0ca9323546_u128),
        (3, 0x0dc650667856f9fc91c1001ee074b5d6),
        (17, 0x7dd3c31e17ac0c8ad3c2e5595ead4227),
        (129, 0x1cb6d96136add0ab6e96a76b718b00ca),
        (240, 0xcce5414d3f67da481e087c8e8df3ed27),
        (241, 0x3a0684e00686a080be815b30f4d862ef),
        (1000, 0xf52176fdf66bd3e202095af0ed2ba4cd),
        (4096, 0x7e3a5d3f9846127a75ffa2b485c567c7),
        (100_000, 0xda176f590925f65fa742797df037be67),
    ] {
        assert_eq!(
            unit_hash(UnitKind::GroupPage, &payload(len)),
            want,
            "{len} bytes"
        );
    }
    assert_eq!(
        unit_hash(UnitKind::Page, &payload(4096)),
        0x17afaaa61b1a14507e799e26140ec81e
    );
}

fn unit_ref(n: u64) -> UnitRef {
    UnitRef {
        pack: n,
        offset: 24 + n,
        len: 100 + n,
        hash: u128::from(n) << 64 | 7,
    }
}

#[test]
fn manifests_round_trip_and_reject_damage() {
    let manifest = Manifest {
        number: 3,
        log_seq: 99,
        graph_version: 120,
        directed: true,
        weighted: false,
        num_vertices: 10,
        num_arcs: 30,
        next_pack: 5,
        base_seq: 50,
        dir_id: 0x1234_5678_9abc_def0_0fed_cba9_8765_4321,
        id_kind: None,
        version: STORE_FORMAT_VERSION,
        base: unit_ref(1),
        ids: unit_ref(2),
        properties: unit_ref(3),
        delta: Some(unit_ref(4)),
    };
    let path = Path::new("MANIFEST");
    let bytes = manifest.encode();
    assert_eq!(Manifest::decode(path, &bytes).unwrap(), manifest);
    for i in 0..bytes.len() {
        let mut bad = bytes.clone();
        bad[i] ^= 0x10;
        assert!(Manifest::decode(path, &bad).is_err(), "byte {i}");
    }
    for len in 0..bytes.len() {
        assert!(
            Manifest::decode(path, &bytes[..len]).is_err(),
            "length {len}"
        );
    }
}

#[test]
fn the_id_kind_round_trips_in_two_flag_bits() {
    let mut manifest = Manifest {
        number: 1,
        log_seq: 0,
        graph_version: 0,
        directed: false,
        weighted: false,
        num_vertices: 0,
        num_arcs: 0,
        next_pack: 2,
        base_seq: 0,
        dir_id: 7,
        id_kind: None,
        version: STORE_FORMAT_VERSION,
        base: unit_ref(1),
        ids: unit_ref(1),
        properties: unit_ref(1),
        delta: None,
    };
    let path = Path::new("MANIFEST");
    // No flag: the bytes of a manifest written before kinds were kept.
    let unset = manifest.encode();
    assert_eq!(u32::from_le_bytes(unset[12..16].try_into().unwrap()), 0);
    for (kind, bit) in [(IdKind::Int, FLAG_INT_IDS), (IdKind::Name, FLAG_NAME_IDS)] {
        manifest.id_kind = Some(kind);
        let bytes = manifest.encode();
        assert_eq!(u32::from_le_bytes(bytes[12..16].try_into().unwrap()), bit);
        assert_eq!(Manifest::decode(path, &bytes).unwrap(), manifest);
    }
    // Both bits, checksum right: refused.
    let mut both = unset[..unset.len() - 4].to_vec();
    both[12..16].copy_from_slice(&(FLAG_INT_IDS | FLAG_NAME_IDS).to_le_bytes());
    let sum = crc32c::crc32c(&both);
    both.extend_from_slice(&sum.to_le_bytes());
    let error = Manifest::decode(path, &both).unwrap_err().to_string();
    assert!(error.contains("both integer and named"), "{error}");
}

#[test]
fn packs_check_every_unit() {
    let id = 0xfeed_u128 << 64 | 9;
    let mut pack = PackWriter::new(5, id);
    let a = pack.add(
        UnitKind::Page,
        b"page bytes",
        unit_hash(UnitKind::Page, b"page bytes"),
    );
    let b = pack.add(UnitKind::Ids, b"", unit_hash(UnitKind::Ids, b""));
    let bytes = pack.finish();
    let path = Path::new("pack-00000005.pack");
    let units = check_pack(path, 5, id, &bytes).unwrap();
    assert_eq!(units, [(UnitKind::Page, a), (UnitKind::Ids, b)]);
    assert_eq!(
        read_unit_checked(path, &bytes, &a, UnitKind::Page).unwrap(),
        b"page bytes"
    );
    assert!(read_unit_checked(path, &bytes, &a, UnitKind::Ids).is_err());
    assert!(check_pack(path, 6, id, &bytes).is_err());
    for i in 0..bytes.len() {
        let mut bad = bytes.clone();
        bad[i] ^= 1;
        assert!(check_pack(path, 5, id, &bad).is_err(), "byte {i}");
    }
    for len in 0..bytes.len() {
        assert!(
            check_pack(path, 5, id, &bytes[..len]).is_err(),
            "length {len}"
        );
    }
    assert_eq!(parse_pack_name(&pack_name(5)), Some(5));
    let err = check_pack(path, 5, id + 1, &bytes).unwrap_err().to_string();
    assert!(err.contains("another data directory"), "{err}");
}

#[test]
fn a_listed_unit_skips_the_crc_only_where_its_hash_matches() {
    let mut pack = PackWriter::new(5, 9);
    let payload = b"the leaves of a page";
    let unit = pack.add(UnitKind::Page, payload, unit_hash(UnitKind::Page, payload));
    let bytes = pack.finish();
    let path = Path::new("pack-00000005.pack");
    let read = |bytes: &[u8], listed: bool| {
        let len = bytes.len() as u64;
        let kinds = [UnitKind::Page];
        read_unit_in(path, (bytes, 0), len, &unit, &kinds, listed)
            .map(|(_, payload)| payload.to_vec())
            .map_err(|e| e.to_string())
    };
    let at = unit.offset as usize;
    let damaged = |i: usize| {
        let mut bad = bytes.clone();
        bad[i] ^= 1;
        bad
    };
    let payload_at = at + UNIT_HEADER;
    let sum_at = payload_at + payload.len();
    for listed in [false, true] {
        assert_eq!(read(&bytes, listed).unwrap(), payload);
        // A damaged payload or header padding is named by the CRC-32C, as unlisted.
        for i in [at + 1, at + 7, payload_at, sum_at - 1] {
            let err = read(&damaged(i), listed).unwrap_err();
            assert!(
                err.contains("Page unit's CRC-32C does not match"),
                "{i}: {err}"
            );
        }
        // The header's kind, length and hash are compared with the reference.
        let err = read(&damaged(at), listed).unwrap_err();
        assert!(err.contains("unknown unit kind 0"), "{err}");
        let err = read(&damaged(at + 8), listed).unwrap_err();
        assert!(err.contains("runs past the end of the pack"), "{err}");
        for i in [at + 16, at + 31] {
            let err = read(&damaged(i), listed).unwrap_err();
            assert!(err.contains("the pack does not hold"), "{i}: {err}");
        }
    }
    // A damaged sum alone: the listed hash vouches for the payload.
    assert!(read(&damaged(sum_at), false).is_err());
    assert_eq!(read(&damaged(sum_at), true).unwrap(), payload);
    // A payload that does not hash as listed (its sum made to match) is named by the hash.
    let mut bad = damaged(payload_at);
    let sum = crc32c::crc32c(&bad[at..sum_at]);
    bad[sum_at..sum_at + 4].copy_from_slice(&sum.to_le_bytes());
    for listed in [false, true] {
        let err = read(&bad, listed).unwrap_err();
        assert!(err.contains("Page unit's hash does not match"), "{err}");
    }
}
