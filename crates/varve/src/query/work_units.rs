//! The scan's units of work: large data files cut into byte ranges, so that the scan's
//! partitions share a file's row groups as they go.
//!
//! DataFusion reads a scan's files from one queue that every partition takes from when it is
//! idle (`datafusion.execution.enable_file_stream_work_stealing`), but it cuts files into only as
//! many ranges as there are partitions. After compaction a table has few large files, and a
//! file holds a range of series: when the work per row depends on the series (a filter that
//! keeps most rows of some trucks and few of others, decoding the rest only for kept rows), one
//! partition gets most of it and the other waits; on the IoT suite three full scans were 20%
//! slower on the compacted table than on its 13 small files. Cutting each large file into
//! several ranges per partition lets the idle partition take the rest. A range reads the row
//! groups whose first page starts in it (DataFusion's rule), so ranges smaller than a row group
//! only cost an open of the cached footer.

use std::sync::Arc;

use datafusion::datasource::listing::PartitionedFile;

/// Ranges per partition the scan's bytes are cut into.
const PIECES_PER_PARTITION: u64 = 4;
/// The smallest range, bytes (about a row group of a few numeric columns).
const MIN_PIECE_BYTES: u64 = 8 * 1024 * 1024;

/// Cuts the files of a scan over `partitions` partitions into ranges of about
/// 1/(4 x `partitions`) of its bytes, at least 8 MiB. `files` are the scan's files with their
/// rows; a range gets its share of the rows (the sum stays exact) and its file's statistics as
/// inexact (a range's rows are a part of the file's; its bounds still bound them). Files that
/// are already ranges, or smaller than 1.5 ranges, stay whole; nothing is cut for one partition.
pub(crate) fn split(files: Vec<(PartitionedFile, u64)>, partitions: usize) -> Vec<(PartitionedFile, u64)> {
    if partitions < 2 || files.is_empty() {
        return files;
    }
    let total: u64 = files.iter().map(|(f, _)| f.object_meta.size).sum();
    let piece = (total / (PIECES_PER_PARTITION * partitions as u64)).max(MIN_PIECE_BYTES);
    let mut out = Vec::with_capacity(files.len());
    for (file, rows) in files {
        let size = file.object_meta.size;
        if file.range.is_some() || size < piece + piece / 2 {
            out.push((file, rows));
            continue;
        }
        let n = size.div_ceil(piece);
        let statistics = file
            .statistics
            .as_ref()
            .map(|s| Arc::new(s.as_ref().clone().to_inexact()));
        for i in 0..n {
            let (start, end) = (size * i / n, size * (i + 1) / n);
            let share = (rows as u128 * end as u128 / size as u128) as u64
                - (rows as u128 * start as u128 / size as u128) as u64;
            let mut range = file.clone().with_range(start as i64, end as i64);
            range.statistics = statistics.clone();
            out.push((range, share));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_files_become_ranges_that_cover_them_and_keep_the_rows() {
        let big = PartitionedFile::new("a.parquet", 200 * 1024 * 1024);
        let small = PartitionedFile::new("b.parquet", 4 * 1024 * 1024);
        let out = split(vec![(big, 1_000_003), (small, 17)], 2);
        let ranges: Vec<_> = out.iter().filter(|(f, _)| f.path().as_ref() == "a.parquet").collect();
        assert!(ranges.len() >= 8, "{}", ranges.len());
        let mut at = 0;
        for (f, _) in &ranges {
            let r = f.range.as_ref().unwrap();
            assert_eq!(r.start, at);
            at = r.end;
        }
        assert_eq!(at, 200 * 1024 * 1024);
        assert_eq!(out.iter().map(|(_, n)| n).sum::<u64>(), 1_000_020);
        assert!(out
            .iter()
            .any(|(f, n)| f.path().as_ref() == "b.parquet" && f.range.is_none() && *n == 17));
        // One partition: nothing to share.
        let one = split(vec![(PartitionedFile::new("a.parquet", 200 * 1024 * 1024), 5)], 1);
        assert_eq!(one.len(), 1);
    }
}
