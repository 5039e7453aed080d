//! Which files of which partitions to merge: a pure function of the live files and the settings,
//! so that it is tested on its own and a dry run shows exactly what a run would do.
//!
//! Size-tiered, in two tiers per partition: files of at least half the target size are settled
//! (the output of an earlier compaction, or a large append); smaller ones are small.
//! - A partition whose files together fit in one target-sized file is merged whole when it holds at
//!   least `min_files` files: the result is one file, and a later run finds nothing to do.
//! - A larger partition merges only its small files, when there are at least `min_files` of them:
//!   settled data is never rewritten again, so repeated runs cost only what was appended since.

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

/// Whether any partition of `touched` holds more than `min_files` files smaller than half the
/// target (the inline compaction trigger).
pub(crate) fn needs_inline(
    live: &[DataFile],
    touched: &[Option<i32>],
    target_file_size: u64,
    min_files: usize,
) -> bool {
    let mut small: BTreeMap<Option<i32>, usize> = BTreeMap::new();
    for f in live {
        let p = partition_of(f);
        if touched.contains(&p) && f.file_size_in_bytes() < target_file_size / 2 {
            *small.entry(p).or_default() += 1;
        }
    }
    small.values().any(|n| *n > min_files)
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
    fn inline_trigger_counts_touched_partitions_only() {
        let live: Vec<DataFile> = (0..9).map(|_| file(1, 10)).chain((0..3).map(|_| file(2, 10))).collect();
        assert!(needs_inline(&live, &[Some(1)], 1_000, 8));
        assert!(!needs_inline(&live, &[Some(2)], 1_000, 8));
    }
}
