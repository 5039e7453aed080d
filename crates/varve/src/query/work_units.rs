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
//!
//! The queue is ordered largest unit first ([`groups`]), the classic longest-processing-time
//! rule for scheduling independent jobs on identical workers (Graham, 1969): the partition that
//! finishes last then waits at most for one of the smallest units. In the order of the manifest, a
//! large range could come last and leave the other partition idle for its whole length. And the
//! ranges shrink as the cutting goes ([`split`]), so that the smallest units, which end the queue,
//! are about a row group even when the table is a few large files.

use std::sync::Arc;

use datafusion::datasource::listing::PartitionedFile;

/// Each range is this fraction of the scan's bytes not yet cut, per partition: 1/(4 x partitions).
const GUIDED_DIVISOR: u64 = 4;
/// The smallest range, bytes (about a row group of a few numeric columns).
const MIN_PIECE_BYTES: u64 = 8 * 1024 * 1024;

/// Cuts the files of a scan over `partitions` partitions into ranges that shrink as the cutting
/// goes: each is about 1/(4 x `partitions`) of the bytes not cut yet, down to about 8 MiB (guided
/// self-scheduling, Polychronopoulos and Kuck, 1987; a file is cut into equal pieces of at most
/// the size wanted, so no piece is a sliver). Sorted largest first ([`groups`]), the queue
/// starts with a few large ranges and ends with ranges of about a row group, so the partition
/// that finishes last waits for little: with ranges of 1/16 of the bytes each, one partition of
/// a full scan of two large compacted files sat idle for up to a sixteenth of the scan while the
/// other read the last range (1-3% slower than over the same rows in many small files, whose
/// small files ended the queue).
///
/// `files` are the scan's files with their rows; a range gets its share of the rows (the sum
/// stays exact) and its file's statistics as inexact (a range's rows are a part of the file's; its
/// bounds still bound them). Files that are already ranges, or smaller than 1.5 ranges, stay whole;
/// nothing is cut for one partition.
pub(crate) fn split(files: Vec<(PartitionedFile, u64)>, partitions: usize) -> Vec<(PartitionedFile, u64)> {
    if partitions < 2 || files.is_empty() {
        return files;
    }
    let divisor = GUIDED_DIVISOR * partitions as u64;
    let mut remaining: u64 = files.iter().map(|(f, _)| f.object_meta.size).sum();
    let piece = |remaining: u64| (remaining / divisor).max(MIN_PIECE_BYTES);
    let mut out = Vec::with_capacity(files.len());
    for (file, rows) in files {
        let size = file.object_meta.size;
        let first = piece(remaining);
        // (Kept whole: its pieces would be smaller than two-thirds of it.)
        if file.range.is_some() || size < first + first / 2 {
            remaining = remaining.saturating_sub(size);
            out.push((file, rows));
            continue;
        }
        let statistics = file
            .statistics
            .as_ref()
            .map(|s| Arc::new(s.as_ref().clone().to_inexact()));
        let mut start = 0;
        while start < size {
            // The rest of the file in equal pieces of at most the size wanted now: the next one.
            let left = size - start;
            let end = start + left / left.div_ceil(piece(remaining));
            let share = (rows as u128 * end as u128 / size as u128) as u64
                - (rows as u128 * start as u128 / size as u128) as u64;
            let mut range = file.clone().with_range(start as i64, end as i64);
            range.statistics = statistics.clone();
            out.push((range, share));
            remaining = remaining.saturating_sub(end - start);
            start = end;
        }
    }
    out
}

/// The bytes a unit reads: its range, or the whole file.
fn unit_bytes(file: &PartitionedFile) -> u64 {
    match &file.range {
        Some(r) => (r.end - r.start).max(0) as u64,
        None => file.object_meta.size,
    }
}

/// Deals the scan's units into `n` file groups (at least one). With `shared_queue` (DataFusion's
/// work stealing, where every partition takes the next unit of one queue made of the groups one
/// after the other), the groups are consecutive runs of the units sorted largest first, so that
/// the queue runs largest first (module docs). Without it, each partition reads its own group:
/// the units go round-robin, in their order.
pub(crate) fn groups(mut units: Vec<PartitionedFile>, n: usize, shared_queue: bool) -> Vec<Vec<PartitionedFile>> {
    let n = n.max(1);
    if !shared_queue {
        let mut groups = vec![vec![]; n];
        for (i, unit) in units.into_iter().enumerate() {
            groups[i % n].push(unit);
        }
        return groups;
    }
    // Stable: units of equal size keep their order (a file's ranges stay in file order).
    units.sort_by_key(|u| std::cmp::Reverse(unit_bytes(u)));
    let per = units.len().div_ceil(n).max(1);
    let mut groups: Vec<Vec<PartitionedFile>> = Vec::with_capacity(n);
    let mut units = units.into_iter().peekable();
    while units.peek().is_some() {
        groups.push(units.by_ref().take(per).collect());
    }
    if groups.is_empty() {
        groups.push(vec![]);
    }
    groups
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
        // Shrinking: the first range is about 1/8 of the bytes, the last ones at most 8 MiB.
        let sizes: Vec<i64> = ranges
            .iter()
            .map(|(f, _)| f.range.as_ref().map(|r| r.end - r.start).unwrap())
            .collect();
        assert!(
            sizes[0] <= 204 * 1024 * 1024 / 8 && sizes[0] >= 20 * 1024 * 1024,
            "{sizes:?}"
        );
        assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "{sizes:?}");
        // A file of 2.25 ranges of the smallest size: three equal ranges.
        let mid = split(vec![(PartitionedFile::new("m.parquet", 18 * 1024 * 1024), 9)], 2);
        let mid: Vec<i64> = mid
            .iter()
            .map(|(f, _)| f.range.as_ref().map(|r| r.end - r.start).unwrap())
            .collect();
        assert_eq!(mid, vec![6 * 1024 * 1024; 3]);
        assert!(*sizes.last().unwrap() <= 8 * 1024 * 1024, "{sizes:?}");
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

    #[test]
    fn a_shared_queue_runs_largest_first_and_own_groups_stay_balanced() {
        let mib = 1024 * 1024;
        let units: Vec<PartitionedFile> = [3, 40, 1, 25, 40, 8]
            .iter()
            .enumerate()
            .map(|(i, m)| PartitionedFile::new(format!("{i}.parquet"), m * mib))
            .collect();
        let queue: Vec<u64> = groups(units.clone(), 2, true)
            .into_iter()
            .flatten()
            .map(|u| unit_bytes(&u) / mib)
            .collect();
        assert_eq!(queue, vec![40, 40, 25, 8, 3, 1]);
        // Ranges of one file, equal in size, keep their file order.
        let file = PartitionedFile::new("r.parquet", 30 * mib);
        let ranges: Vec<PartitionedFile> = (0..3)
            .map(|i| file.clone().with_range(i * 10 * mib as i64, (i + 1) * 10 * mib as i64))
            .collect();
        let starts: Vec<i64> = groups(ranges, 2, true)
            .into_iter()
            .flatten()
            .map(|u| u.range.unwrap().start)
            .collect();
        assert_eq!(starts, vec![0, 10 * mib as i64, 20 * mib as i64]);
        // Without a shared queue: round-robin, as given.
        let own = groups(units, 2, false);
        assert_eq!(own.len(), 2);
        assert_eq!(own[0].len(), 3);
        assert_eq!(own[1].len(), 3);
        // Fewer units than groups: no empty group beyond the first.
        assert_eq!(groups(vec![file], 4, true).len(), 1);
    }
}
