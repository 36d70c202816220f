//! Incremental checkpoints (PART paper, section 4.1): a version is written as units, one
//! per subtree at a depth threshold plus one for the entries above it, and a later
//! checkpoint writes only the units whose subtree changed, referring to the earlier files
//! for the rest.
//!
//! A subtree is unchanged exactly when the new version still holds the same node (path
//! copying replaces every node on a changed path), so a checkpoint keeps its units' root
//! nodes and recognises them by identity; it therefore keeps those nodes alive, like a held
//! snapshot, until it is dropped.
//!
//! Every file is written under a temporary name and renamed into place, the manifest last,
//! so a reader never sees a partial file; files are not fsynced here (a checkpoint of
//! thousands of units would wait on thousands of syncs): the durability layer that uses
//! checkpoints decides when to sync.
//!
//! Files in the checkpoint directory (all integers little-endian):
//! * `unit-V-N.part`: the entries of one unit in key order: the 8 bytes `PARTUNIT`, the
//!   entry count (u64), then per entry the key length (u32), the key, the value length
//!   (u32) and the value as `encode` wrote it; last the CRC-32 of everything before it.
//! * `checkpoint-V.manifest`: text lines `part-checkpoint 1`, `version V`, `depth D`,
//!   `top FILE` (the unit of the entries above the threshold), then one `unit FILE` line
//!   per subtree unit in key order.
//!
//! The durable store does not use these files: it writes a version's id dictionary and
//! its property columns (PART maps keyed by vertex id) as subtree units in its own packs
//! (`store::units`, format 5), cut at a fixed key prefix and recognised by content hash
//! rather than node identity, so that a directory reopened from disk (which holds no
//! nodes of the last checkpoint) still reuses the subtrees that did not change. This
//! module is the identity-based form for maps checkpointed on their own.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::iter::{Frame, Iter};
use super::node::{for_each_child, header_of, Inner, NodeRef};
use super::Part;

const UNIT_MAGIC: &[u8; 8] = b"PARTUNIT";

/// One written checkpoint of a version.
pub struct Checkpoint<V> {
    dir: PathBuf,
    version: u64,
    depth: usize,
    manifest: PathBuf,
    /// Each subtree unit: its path (the key bytes leading to it), its root node, its file.
    units: Vec<(Vec<u8>, NodeRef<V>, String)>,
    written: usize,
}

impl<V> std::fmt::Debug for Checkpoint<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpoint")
            .field("manifest", &self.manifest)
            .field("units", &self.units.len())
            .field("written", &self.written)
            .finish()
    }
}

impl<V> Checkpoint<V> {
    /// The version number it was written as.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The manifest file, which names every unit of the version.
    pub fn manifest(&self) -> &Path {
        &self.manifest
    }

    /// Subtree units in the version (the top unit not counted).
    pub fn units(&self) -> usize {
        self.units.len()
    }

    /// Units this checkpoint wrote, the top unit included (the rest refer to earlier files).
    pub fn written(&self) -> usize {
        self.written
    }
}

/// Splits the tree at `depth` levels: calls `top` on the entries of nodes above the
/// threshold and `unit(path, node)` on each subtree root at the threshold, in key order.
fn split<'a, V: Clone>(
    node: &'a NodeRef<V>,
    level: usize,
    depth: usize,
    path: &mut Vec<u8>,
    top: &mut dyn FnMut(&'a [u8], &'a V),
    unit: &mut dyn FnMut(&[u8], &'a NodeRef<V>),
) {
    if level >= depth {
        unit(path, node);
        return;
    }
    let Some(header) = header_of(node) else {
        if let NodeRef::Leaf(l) = node {
            top(l.key.as_slice(), &l.value);
        }
        return;
    };
    if let Some(t) = &header.terminal {
        top(t.key.as_slice(), &t.value);
    }
    if let NodeRef::Values(values) = node {
        // Entries, not subtrees: above the threshold, they belong to the top unit.
        for i in 0..values.len() {
            let (key, value) = values.entry(i);
            top(key, value);
        }
        return;
    }
    let start = path.len();
    path.extend_from_slice(&header.prefix);
    let mut bytes = Vec::new();
    for_each_child(node, &mut |byte, _| bytes.push(byte));
    for byte in bytes {
        path.push(byte);
        let child = child_by_byte(node, byte).expect("the child was just listed");
        split(child, level + 1, depth, path, top, unit);
        path.pop();
    }
    path.truncate(start);
}

fn child_by_byte<V: Clone>(node: &NodeRef<V>, byte: u8) -> Option<&NodeRef<V>> {
    match node {
        NodeRef::Leaf(_) => None,
        NodeRef::N4(n) => n.child(byte),
        NodeRef::N16(n) => n.child(byte),
        NodeRef::N48(n) => n.child(byte),
        NodeRef::N256(n) => n.child(byte),
        NodeRef::Values(_) => None,
    }
}

fn write_unit<'a, V: 'a>(
    path: &Path,
    entries: impl Iterator<Item = (&'a [u8], &'a V)>,
    encode: &dyn Fn(&V, &mut Vec<u8>),
) -> io::Result<()> {
    let mut body = Vec::new();
    let mut count = 0u64;
    let mut value = Vec::new();
    for (key, v) in entries {
        value.clear();
        encode(v, &mut value);
        body.extend_from_slice(&(key.len() as u32).to_le_bytes());
        body.extend_from_slice(key);
        body.extend_from_slice(&(value.len() as u32).to_le_bytes());
        body.extend_from_slice(&value);
        count += 1;
    }
    let mut out = Vec::with_capacity(body.len() + 20);
    out.extend_from_slice(UNIT_MAGIC);
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&body);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    let tmp = path.with_extension("tmp");
    let mut file = std::fs::File::create(&tmp)?;
    file.write_all(&out)?;
    drop(file);
    std::fs::rename(&tmp, path)
}

fn bad(path: &Path, what: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{}: {what}", path.display()),
    )
}

/// Reads one unit file, calling `f` on each entry.
/// What [`read_unit`] calls on each entry: key bytes, value bytes.
type OnEntry<'f> = dyn FnMut(&[u8], &[u8]) -> io::Result<()> + 'f;

fn read_unit(path: &Path, f: &mut OnEntry<'_>) -> io::Result<()> {
    let bytes = std::fs::read(path)?;
    if bytes.len() < 20 || &bytes[..8] != UNIT_MAGIC {
        return Err(bad(path, "not a PART unit file"));
    }
    let (content, crc) = bytes.split_at(bytes.len() - 4);
    if crc32fast::hash(content) != u32::from_le_bytes(crc.try_into().expect("4 bytes")) {
        return Err(bad(path, "checksum mismatch (damaged unit)"));
    }
    let count = u64::from_le_bytes(content[8..16].try_into().expect("8 bytes"));
    let mut at = 16;
    let mut take = |n: usize| -> io::Result<&[u8]> {
        let piece = content
            .get(at..at + n)
            .ok_or_else(|| bad(path, "truncated entry"))?;
        at += n;
        Ok(piece)
    };
    for _ in 0..count {
        let len = u32::from_le_bytes(take(4)?.try_into().expect("4 bytes")) as usize;
        let key = take(len)?.to_vec();
        let len = u32::from_le_bytes(take(4)?.try_into().expect("4 bytes")) as usize;
        let value = take(len)?;
        f(&key, value)?;
    }
    if at != content.len() {
        return Err(bad(path, "bytes after the last entry"));
    }
    Ok(())
}

impl<V: Clone> Part<V> {
    /// Writes this version as version `version` of a checkpoint in `dir`: one unit per
    /// subtree `depth` levels below the root, and one for the entries above. With
    /// `previous` (an earlier checkpoint in the same directory), subtrees this version
    /// shares with it are not written again: the manifest refers to their files.
    ///
    /// # Errors
    /// Any I/O error; files already written stay (a manifest is written last, so a
    /// checkpoint without its manifest never counts).
    pub fn write_checkpoint(
        &self,
        dir: &Path,
        version: u64,
        depth: usize,
        previous: Option<&Checkpoint<V>>,
        encode: impl Fn(&V, &mut Vec<u8>),
    ) -> io::Result<Checkpoint<V>> {
        std::fs::create_dir_all(dir)?;
        let known: HashMap<usize, &str> = previous
            .filter(|p| p.dir == dir && p.depth == depth)
            .map(|p| {
                p.units
                    .iter()
                    .map(|(_, node, file)| (node.id(), file.as_str()))
                    .collect()
            })
            .unwrap_or_default();
        let mut top_entries: Vec<(&[u8], &V)> = Vec::new();
        let mut unit_roots: Vec<(Vec<u8>, &NodeRef<V>)> = Vec::new();
        if let Some(root) = &self.root {
            split(
                root,
                0,
                depth,
                &mut Vec::new(),
                &mut |k, v| top_entries.push((k, v)),
                &mut |path, node| unit_roots.push((path.to_vec(), node)),
            );
        }
        let mut written = 0;
        let mut units = Vec::with_capacity(unit_roots.len());
        for (n, (path, node)) in unit_roots.into_iter().enumerate() {
            let file = match known.get(&node.id()) {
                Some(file) => (*file).to_string(),
                None => {
                    let file = format!("unit-{version}-{n}.part");
                    let iter = Iter {
                        stack: vec![Frame::new(node)],
                    };
                    write_unit(&dir.join(&file), iter, &encode)?;
                    written += 1;
                    file
                }
            };
            units.push((path, node.clone(), file));
        }
        let top = format!("unit-{version}-top.part");
        write_unit(&dir.join(&top), top_entries.into_iter(), &encode)?;
        written += 1;
        let mut manifest =
            format!("part-checkpoint 1\nversion {version}\ndepth {depth}\ntop {top}\n");
        for (_, _, file) in &units {
            manifest.push_str(&format!("unit {file}\n"));
        }
        let path = dir.join(format!("checkpoint-{version}.manifest"));
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, manifest)?;
        std::fs::rename(&tmp, &path)?;
        Ok(Checkpoint {
            dir: dir.to_path_buf(),
            version,
            depth,
            manifest: path,
            units,
            written,
        })
    }

    /// The paths (key bytes leading to the subtree) of the units of this version that
    /// differ from `since`'s: what a checkpoint after `since` has to write. The top unit
    /// is always written and not listed.
    pub fn units_changed_since(&self, since: &Checkpoint<V>) -> Vec<Vec<u8>> {
        let known: std::collections::HashSet<usize> =
            since.units.iter().map(|(_, node, _)| node.id()).collect();
        let mut changed = Vec::new();
        if let Some(root) = &self.root {
            split(
                root,
                0,
                since.depth,
                &mut Vec::new(),
                &mut |_, _| {},
                &mut |path, node| {
                    if !known.contains(&node.id()) {
                        changed.push(path.to_vec());
                    }
                },
            );
        }
        changed
    }

    /// Reads a checkpoint back from its manifest, decoding values with `decode` (`None`
    /// for a value it cannot read, which is an error naming the file).
    ///
    /// # Errors
    /// I/O errors, a malformed manifest, a damaged or truncated unit, an undecodable value.
    pub fn read_checkpoint(
        manifest: &Path,
        decode: impl Fn(&[u8]) -> Option<V>,
    ) -> io::Result<Part<V>> {
        let text = std::fs::read_to_string(manifest)?;
        let dir = manifest.parent().unwrap_or(Path::new("."));
        let mut lines = text.lines();
        if lines.next() != Some("part-checkpoint 1") {
            return Err(bad(manifest, "not a PART checkpoint manifest (version 1)"));
        }
        let mut part = Part::new();
        for (number, line) in lines.enumerate() {
            let Some((tag, value)) = line.split_once(' ') else {
                return Err(bad(manifest, format!("line {}: {line:?}", number + 2)));
            };
            match tag {
                "version" | "depth" => {}
                "top" | "unit" => {
                    if value.contains(['/', '\\']) || value.starts_with('.') {
                        return Err(bad(
                            manifest,
                            format!("line {}: bad file name {value:?}", number + 2),
                        ));
                    }
                    let path = dir.join(value);
                    read_unit(&path, &mut |key, bytes| {
                        let v =
                            decode(bytes).ok_or_else(|| bad(&path, "a value does not decode"))?;
                        part.insert(key, v);
                        Ok(())
                    })?;
                }
                _ => {
                    return Err(bad(
                        manifest,
                        format!("line {}: unknown entry {tag:?}", number + 2),
                    ))
                }
            }
        }
        Ok(part)
    }
}
