//! Which files of which partitions to merge: a pure function of the live files and the settings,
//! so that it is tested on its own and a dry run shows exactly what a run would do.
//!
//! Files of at least half the target size are settled (the output of an earlier compaction, or a
//! large append); smaller ones are small. Two plans:
//! - [`plan`], for `maintain`: a partition whose files together fit in one target-sized file is
//!   merged whole when it holds at least `min_files` files: the result is one file, and a later
//!   run finds nothing to do. A larger partition merges only its small files, when there are at
//!   least `min_files` of them: settled data is never rewritten again.
//! - [`plan_inline`], after an append: geometric merging of the small files of the partitions the
//!   append touched, so that frequent small appends keep a bounded number of files without
//!   rewriting the partition on every trigger.

use std::collections::BTreeMap;

use iceberg::spec::DataFile;

use crate::format::manifest::partition_of;

/// The files of one partition to merge into new files.
#[derive(Debug, Clone)]
pub(crate) struct MergeGroup {
    /// The partition value (hours, days or months since the epoch); `None` for a plain table.
    pub(crate) partition: Option<i32>,
    pub(crate) files: Vec<DataFile>,
}

impl MergeGroup {
    pub(crate) fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.file_size_in_bytes()).sum()
    }
    pub(crate) fn rows(&self) -> u64 {
        self.files.iter().map(|f| f.record_count()).sum()
    }
}

/// The groups to merge among `files`, oldest partition first. `min_files` is at least 2.
pub(crate) fn plan(files: &[DataFile], target_file_size: u64, min_files: usize) -> Vec<MergeGroup> {
    let min_files = min_files.max(2);
    let mut by_partition: BTreeMap<Option<i32>, Vec<&DataFile>> = BTreeMap::new();
    for f in files {
        by_partition.entry(partition_of(f)).or_default().push(f);
    }
    let mut out = Vec::new();
    for (partition, files) in by_partition {
        let total: u64 = files.iter().map(|f| f.file_size_in_bytes()).sum();
        let chosen: Vec<&DataFile> = if total <= target_file_size {
            files
        } else {
            files
                .into_iter()
                .filter(|f| f.file_size_in_bytes() < target_file_size / 2)
                .collect()
        };
        if chosen.len() >= min_files {
            out.push(MergeGroup {
                partition,
                files: chosen.into_iter().cloned().collect(),
            });
        }
    }
    out
}

/// The groups inline compaction merges after an append to the partitions `touched`: in each
/// touched partition with more than `min_files` small files (smaller than half the target), the
/// smallest small files, as many as bring the partition back to `min_files` (at least two), then
/// each next-smallest while it is at most twice the size of those chosen so far.
///
/// So a merged file is at least about twice as large as its largest input, and a row is
/// rewritten about log2(partition / append) times in all (geometric merging, as in a log-structured
/// merge tree's tiers), never on every trigger as a merge of the whole partition would: 1,000
/// equal appends with `min_files` 8 rewrite each row 4.4 times on average, keeping 6 files; a
/// whole-partition merge rewrites each 62 times. The count of small files stays at most
/// `min_files` + 1 after any append.
pub(crate) fn plan_inline(
    live: &[DataFile],
    touched: &[Option<i32>],
    target_file_size: u64,
    min_files: usize,
) -> Vec<MergeGroup> {
    let min_files = min_files.max(1);
    let mut small: BTreeMap<Option<i32>, Vec<&DataFile>> = BTreeMap::new();
    for f in live {
        let p = partition_of(f);
        if touched.contains(&p) && f.file_size_in_bytes() < target_file_size / 2 {
            small.entry(p).or_default().push(f);
        }
    }
    let mut out = Vec::new();
    for (partition, mut files) in small {
        if files.len() <= min_files {
            continue;
        }
        files.sort_by(|a, b| {
            a.file_size_in_bytes()
                .cmp(&b.file_size_in_bytes())
                .then_with(|| a.file_path().cmp(b.file_path()))
        });
        let mut n = (files.len() + 1 - min_files).max(2);
        let mut bytes: u64 = files[..n].iter().map(|f| f.file_size_in_bytes()).sum();
        while let Some(next) = files.get(n) {
            let size = next.file_size_in_bytes();
            if size > 2 * bytes || bytes + size > target_file_size {
                break;
            }
            bytes += size;
            n += 1;
        }
        out.push(MergeGroup {
            partition,
            files: files[..n].iter().map(|f| (*f).clone()).collect(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use iceberg::spec::{DataContentType, DataFileBuilder, DataFileFormat, Literal, Struct};

    fn file(partition: i32, size: u64) -> DataFile {
        DataFileBuilder::default()
            .content(DataContentType::Data)
            .file_path(format!("f-{partition}-{size}-{}", uuid::Uuid::new_v4()))
            .file_format(DataFileFormat::Parquet)
            .partition(Struct::from_iter([Some(Literal::int(partition))]))
            .partition_spec_id(0)
            .record_count(size)
            .file_size_in_bytes(size)
            .build()
            .unwrap()
    }

    #[test]
    fn small_partitions_merge_whole_and_settle() {
        let files: Vec<DataFile> = (0..300).map(|_| file(1, 1_000)).chain([file(2, 5_000)]).collect();
        let groups = plan(&files, 1_000_000, 2);
        assert_eq!(groups.len(), 1, "partition 2 has one file: nothing to do");
        assert_eq!(groups[0].files.len(), 300);
        assert_eq!(groups[0].partition, Some(1));
        // After the merge the partition holds one file: a second run does nothing.
        assert!(plan(&[file(1, 300_000), file(2, 5_000)], 1_000_000, 2).is_empty());
    }

    #[test]
    fn large_partitions_merge_only_small_files() {
        let mut files = vec![file(1, 900_000), file(1, 800_000)];
        files.extend((0..10).map(|_| file(1, 1_000)));
        let groups = plan(&files, 1_000_000, 2);
        assert_eq!(groups[0].files.len(), 10);
        assert!(groups[0].files.iter().all(|f| f.file_size_in_bytes() == 1_000));
        assert!(
            plan(&files[..2], 1_000_000, 2).is_empty(),
            "settled files are not rewritten"
        );
        assert!(
            plan(&files, 1_000_000, 11).is_empty(),
            "fewer small files than min_files"
        );
    }

    #[test]
    fn inline_merges_touched_partitions_only() {
        let live: Vec<DataFile> = (0..9).map(|_| file(1, 10)).chain((0..3).map(|_| file(2, 10))).collect();
        assert_eq!(plan_inline(&live, &[Some(1)], 1_000, 8).len(), 1);
        assert!(plan_inline(&live, &[Some(2)], 1_000, 8).is_empty());
        assert!(
            plan_inline(&live[..8], &[Some(1)], 1_000, 8).is_empty(),
            "8 files: no trigger"
        );
    }

    #[test]
    fn inline_merges_geometrically() {
        // A merged file of 8 appends, then 9 new appends: the new ones merge (and the old
        // merged file joins, being at most twice their size).
        let mut live = vec![file(1, 80)];
        live.extend((0..8).map(|_| file(1, 10)));
        let g = plan_inline(&live, &[Some(1)], 1_000_000, 8);
        assert_eq!(g[0].files.len(), 9);
        // A large file is left alone when the small ones are much smaller.
        let mut live = vec![file(1, 10_000)];
        live.extend((0..8).map(|_| file(1, 10)));
        let g = plan_inline(&live, &[Some(1)], 1_000_000, 8);
        assert_eq!(g[0].files.len(), 8);
        assert!(g[0].files.iter().all(|f| f.file_size_in_bytes() == 10));
    }

    /// Simulates appends of equal size: the small-file count stays bounded and each byte is
    /// rewritten a few times, not on every trigger.
    #[test]
    fn inline_write_amplification_is_logarithmic() {
        let mut live: Vec<DataFile> = vec![];
        let mut rewritten = 0u64;
        for _ in 0..1000 {
            live.push(file(1, 100));
            for g in plan_inline(&live, &[Some(1)], u64::MAX / 4, 8) {
                let gone: std::collections::HashSet<&str> = g.files.iter().map(|f| f.file_path()).collect();
                live.retain(|f| !gone.contains(f.file_path()));
                rewritten += g.bytes();
                live.push(file(1, g.bytes()));
            }
            assert!(live.len() <= 9, "{} files", live.len());
        }
        let amplification = rewritten as f64 / 100_000.0;
        assert!(amplification < 6.0, "each byte rewritten {amplification} times");
    }
}
