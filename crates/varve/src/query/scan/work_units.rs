//! The scan's units of work: large data files cut into byte ranges of whole row groups, and the
//! last row groups into halves, so that the scan's partitions share a file's row groups as they
//! go and finish together.
//!
//! DataFusion reads a scan's files from one queue that every partition takes from when it is
//! idle (`datafusion.execution.enable_file_stream_work_stealing`), but it cuts files into only as
//! many ranges as there are partitions. After compaction a table has few large files, and a
//! file holds a range of series: when the work per row depends on the series (a filter that
//! keeps most rows of some trucks and few of others, decoding the rest only for kept rows), one
//! partition gets most of it and the other waits; on the IoT suite three full scans were 20%
//! slower on the compacted table than on its 13 small files. Cutting each large file into
//! several ranges per partition lets the idle partition take the rest. A range reads the row
//! groups whose first page starts in it (DataFusion's rule); where the footer is in the lake's
//! cache, ranges are cut where row groups start, so none is empty.
//!
//! The queue is ordered largest unit first ([`groups`]), the classic longest-processing-time
//! rule for scheduling independent jobs on identical workers (Graham, 1969): the partition that
//! finishes last then waits at most for one of the smallest units. In the order of the manifest, a
//! large range could come last and leave the other partition idle for its whole length. And the
//! units shrink as the cutting goes ([`split`]), so that the smallest ones, which end the queue,
//! are a row group, or half of one (by rows, through an access plan) when the footer is known.

use std::sync::Arc;

use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::{ParquetAccessPlan, RowGroupAccess};
use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use parquet::file::metadata::{ParquetMetaData, RowGroupMetaData};

/// Each range is this fraction of the scan's bytes not yet cut, per partition: 1/(4 x partitions).
const GUIDED_DIVISOR: u64 = 4;
/// The smallest range of a file whose footer is not known yet, bytes (about a row group of a few
/// numeric columns). With the footer, a range is at least one row group, whatever its bytes.
const MIN_PIECE_BYTES: u64 = 8 * 1024 * 1024;
/// A row group is halved at the end of the queue only when each half has at least this many rows.
const MIN_HALF_ROWS: usize = 16 * 1024;

/// One unit of a scan's queue: a data file, a byte range of it, or half of one of its row groups.
pub(crate) struct Unit {
    /// The file, with its range and access plan (`ParquetAccessPlan` extension) if any.
    pub(crate) file: PartitionedFile,
    /// The bytes it reads, bytes (its place in the queue: largest first).
    bytes: u64,
    /// The row group it is, when it is exactly one whose footer is known: (footer, index).
    row_group: Option<(Arc<ParquetMetaData>, usize)>,
}

impl Unit {
    /// A whole file or an existing range, as it is.
    pub(crate) fn whole(file: PartitionedFile) -> Unit {
        let bytes = match &file.range {
            Some(r) => (r.end - r.start).max(0) as u64,
            None => file.object_meta.size,
        };
        Unit {
            file,
            bytes,
            row_group: None,
        }
    }
}

/// Where row group `rg` starts, bytes: the first page of its first column. DataFusion reads a row
/// group in the byte range its first page starts in (`prune_by_range`).
pub(crate) fn row_group_start(rg: &RowGroupMetaData) -> u64 {
    let c = rg.column(0);
    c.dictionary_page_offset()
        .unwrap_or_else(|| c.data_page_offset())
        .max(0) as u64
}

/// Where each row group of `footer` starts ([`row_group_start`]), and the file's size after the
/// last. `None` unless they rise strictly within the file (the cuts could otherwise overlap).
fn row_group_starts(footer: &ParquetMetaData, size: u64) -> Option<Vec<u64>> {
    let mut starts: Vec<u64> = footer.row_groups().iter().map(row_group_start).collect();
    starts.push(size);
    starts.windows(2).all(|w| w[0] < w[1]).then_some(starts)
}

/// Cuts the files of a scan over `partitions` partitions into units that shrink as the cutting
/// goes: each is about 1/(4 x `partitions`) of the bytes not cut yet (guided self-scheduling,
/// Polychronopoulos and Kuck, 1987). Sorted largest first ([`groups`]), the queue starts with a
/// few large units and ends with small ones, so the partition that finishes last waits for
/// little.
///
/// A file whose footer `footer` knows (the lake's footer cache: no request) is cut at its row
/// groups: a unit is a run of whole row groups (a byte range from the first's start to the next's,
/// DataFusion's rule), at least one. On local storage (`object_store` false) units go down to one
/// row group, and the `partitions` smallest units of the queue that are one row group are halved
/// by rows (an access plan that selects half of its rows; with the page index the scan decodes
/// only that half's pages), so that the queue ends with half row groups. Measured on the IoT
/// suite: a compacted file of whole row groups left one partition idle for up to a row group's
/// work at the end of a full scan, 1-3% slower than the same rows in many small files. On object
/// storage a unit's first read is a round trip its thread waits on, and a selective query's few
/// row groups spread over many small units would be read one after the other: units stay at least
/// about 8 MiB there, and nothing is halved. A file whose footer is not known yet is cut in equal
/// byte ranges of at least about 8 MiB. Either way a file smaller than 1.5 units stays whole, and
/// so do files that are already ranges; nothing is cut for one partition. A file's access plan
/// (`page_pruning`) is kept: each unit reads its part of what the plan selects, and a row group
/// the plan reads in part is never halved.
///
/// A range gets its file's statistics as inexact (its rows are a part of the file's; its bounds
/// still bound them).
pub(crate) fn split(
    files: Vec<PartitionedFile>,
    partitions: usize,
    footer: &dyn Fn(&PartitionedFile) -> Option<Arc<ParquetMetaData>>,
    object_store: bool,
) -> Vec<Unit> {
    if partitions < 2 || files.is_empty() {
        return files.into_iter().map(Unit::whole).collect();
    }
    let divisor = GUIDED_DIVISOR * partitions as u64;
    let mut remaining: u64 = files.iter().map(|f| f.object_meta.size).sum();
    let piece = |remaining: u64| (remaining / divisor).max(MIN_PIECE_BYTES);
    // The size wanted of a unit of whole row groups.
    let floor = if object_store { MIN_PIECE_BYTES } else { 0 };
    let row_groups_piece = |remaining: u64| (remaining / divisor).max(floor);
    let mut out = Vec::with_capacity(files.len());
    for file in files {
        let size = file.object_meta.size;
        if file.range.is_some() {
            remaining = remaining.saturating_sub(size);
            out.push(Unit::whole(file));
            continue;
        }
        let statistics = file
            .statistics
            .as_ref()
            .map(|s| Arc::new(s.as_ref().clone().to_inexact()));
        let range = |start: u64, end: u64| {
            let mut range = file.clone().with_range(start as i64, end as i64);
            range.statistics = statistics.clone();
            range
        };
        let known = footer(&file).and_then(|f| Some((row_group_starts(&f, size)?, f)));
        let first = row_groups_piece(remaining);
        // (Kept whole, below: its units would be smaller than two-thirds of it.)
        let small = size < first + first / 2;
        if let Some((starts, footer)) =
            known.filter(|(_, f)| f.num_row_groups() > 0 && (f.num_row_groups() == 1 || !small))
        {
            let n = footer.num_row_groups();
            // A row group's weight: its compressed bytes, none when the file's plan skips it.
            let plan = file.extension::<ParquetAccessPlan>().filter(|p| p.len() == n);
            let weight = |g: usize| match plan.map(|p| &p.inner()[g]) {
                Some(RowGroupAccess::Skip) => 0,
                _ => footer.row_group(g).compressed_size().max(0) as u64,
            };
            if n == 1 {
                remaining = remaining.saturating_sub(size);
                let bytes = weight(0);
                out.push(Unit {
                    file,
                    bytes,
                    row_group: Some((footer, 0)),
                });
                continue;
            }
            let mut units = vec![];
            let mut first = 0;
            while first < n {
                // Whole row groups up to the size wanted now, at least one (the first unit from
                // the file's start, the last to its end).
                let want = row_groups_piece(remaining);
                let mut last = first + 1;
                while last < n && starts[last] - starts[first] < want {
                    last += 1;
                }
                let start = if first == 0 { 0 } else { starts[first] };
                let end = starts[last];
                units.push(Unit {
                    file: range(start, end),
                    bytes: (first..last).map(weight).sum(),
                    row_group: (last == first + 1).then(|| (footer.clone(), first)),
                });
                remaining = remaining.saturating_sub(end - start);
                first = last;
            }
            if units.len() == 1 {
                out.push(Unit::whole(file));
            } else {
                out.extend(units);
            }
            continue;
        }
        let first = piece(remaining);
        // (Kept whole: its pieces would be smaller than two-thirds of it.)
        if size < first + first / 2 {
            remaining = remaining.saturating_sub(size);
            out.push(Unit::whole(file));
            continue;
        }
        let mut start = 0;
        while start < size {
            // The rest of the file in equal pieces of at most the size wanted now: the next one.
            let left = size - start;
            let end = start + left / left.div_ceil(piece(remaining));
            out.push(Unit {
                file: range(start, end),
                bytes: end - start,
                row_group: None,
            });
            remaining = remaining.saturating_sub(end - start);
            start = end;
        }
    }
    if object_store {
        return out;
    }
    halve_tail(out, partitions)
}

/// The `partitions` smallest units that are one row group of a known footer (with its page
/// index), with enough rows and read whole, each replaced by its two halves by rows.
fn halve_tail(units: Vec<Unit>, partitions: usize) -> Vec<Unit> {
    // Each that can be halved: its footer, row group and the access plan its halves start from.
    type Halvable = (Arc<ParquetMetaData>, usize, ParquetAccessPlan);
    let halvable = |unit: &Unit| -> Option<Halvable> {
        let (footer, g) = unit.row_group.clone()?;
        let rows = footer.row_group(g).num_rows().max(0) as usize;
        // (Without the page index a half would decode every page of the row group.)
        if rows < 2 * MIN_HALF_ROWS || footer.offset_index().is_none() {
            return None;
        }
        let base = match unit.file.extension::<ParquetAccessPlan>() {
            None => ParquetAccessPlan::new_all(footer.num_row_groups()),
            Some(plan) if plan.len() == footer.num_row_groups() => plan.clone(),
            // (Not the file's plan: the scan reports it.)
            Some(_) => return None,
        };
        // (A row group a plan reads in part is left whole: its halves would not be halves.)
        matches!(base.inner()[g], RowGroupAccess::Scan).then_some((footer, g, base))
    };
    let mut tail: Vec<(usize, Halvable)> = units
        .iter()
        .enumerate()
        .filter_map(|(i, u)| Some((i, halvable(u)?)))
        .collect();
    tail.sort_by_key(|(i, _)| units[*i].bytes);
    tail.truncate(partitions);
    let mut halves = vec![];
    let mut replaced = vec![false; units.len()];
    for (i, (footer, g, base)) in tail {
        let unit = &units[i];
        let rows = footer.row_group(g).num_rows().max(0) as usize;
        let statistics = unit
            .file
            .statistics
            .as_ref()
            .map(|s| Arc::new(s.as_ref().clone().to_inexact()));
        let half = rows / 2;
        for selectors in [
            vec![RowSelector::select(half), RowSelector::skip(rows - half)],
            vec![RowSelector::skip(half), RowSelector::select(rows - half)],
        ] {
            let mut plan = base.clone();
            for other in (0..footer.num_row_groups()).filter(|&o| o != g) {
                plan.skip(other);
            }
            plan.scan_selection(g, RowSelection::from(selectors));
            let mut file = unit.file.clone().with_extension(plan);
            file.statistics = statistics.clone();
            halves.push(Unit {
                file,
                bytes: unit.bytes / 2,
                row_group: None,
            });
        }
        replaced[i] = true;
    }
    let mut out: Vec<Unit> = units
        .into_iter()
        .zip(replaced)
        .filter_map(|(u, r)| (!r).then_some(u))
        .collect();
    out.extend(halves);
    out
}

/// Deals the scan's units into `n` file groups (at least one). With `shared_queue` (DataFusion's
/// work stealing, where every partition takes the next unit of one queue made of the groups one
/// after the other), the groups are consecutive runs of the units sorted largest first, so that
/// the queue runs largest first (module docs). Without it, each partition reads its own group:
/// the units go round-robin, in their order.
pub(crate) fn groups(mut units: Vec<Unit>, n: usize, shared_queue: bool) -> Vec<Vec<PartitionedFile>> {
    let n = n.max(1);
    if !shared_queue {
        let mut groups = vec![vec![]; n];
        for (i, unit) in units.into_iter().enumerate() {
            groups[i % n].push(unit.file);
        }
        return groups;
    }
    // Stable: units of equal size keep their order (a file's ranges stay in file order).
    units.sort_by_key(|u| std::cmp::Reverse(u.bytes));
    let per = units.len().div_ceil(n).max(1);
    let mut groups: Vec<Vec<PartitionedFile>> = Vec::with_capacity(n);
    let mut units = units.into_iter().map(|u| u.file).peekable();
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

    fn range_of(f: &PartitionedFile) -> (i64, i64) {
        f.range.as_ref().map(|r| (r.start, r.end)).unwrap()
    }

    #[test]
    fn large_files_without_footers_become_byte_ranges_that_cover_them() {
        let big = PartitionedFile::new("a.parquet", 200 * 1024 * 1024);
        let small = PartitionedFile::new("b.parquet", 4 * 1024 * 1024);
        let out = split(vec![big, small], 2, &|_| None, false);
        let ranges: Vec<_> = out.iter().filter(|u| u.file.path().as_ref() == "a.parquet").collect();
        assert!(ranges.len() >= 8, "{}", ranges.len());
        // Shrinking: the first range is about 1/8 of the bytes, the last ones at most 8 MiB.
        let sizes: Vec<i64> = ranges.iter().map(|u| range_of(&u.file)).map(|(a, b)| b - a).collect();
        assert!(
            sizes[0] <= 204 * 1024 * 1024 / 8 && sizes[0] >= 20 * 1024 * 1024,
            "{sizes:?}"
        );
        assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "{sizes:?}");
        // A file of 2.25 ranges of the smallest size: three equal ranges.
        let mid = split(
            vec![PartitionedFile::new("m.parquet", 18 * 1024 * 1024)],
            2,
            &|_| None,
            false,
        );
        let mid: Vec<i64> = mid.iter().map(|u| range_of(&u.file)).map(|(a, b)| b - a).collect();
        assert_eq!(mid, vec![6 * 1024 * 1024; 3]);
        assert!(*sizes.last().unwrap() <= 8 * 1024 * 1024, "{sizes:?}");
        let mut at = 0;
        for u in &ranges {
            let (start, end) = range_of(&u.file);
            assert_eq!(start, at);
            at = end;
        }
        assert_eq!(at, 200 * 1024 * 1024);
        assert!(out
            .iter()
            .any(|u| u.file.path().as_ref() == "b.parquet" && u.file.range.is_none()));
        // One partition: nothing to share.
        let one = split(
            vec![PartitionedFile::new("a.parquet", 200 * 1024 * 1024)],
            1,
            &|_| None,
            false,
        );
        assert_eq!(one.len(), 1);
    }

    /// A Parquet file of `groups` row groups of `rows` rows each (two columns; `t` counts the rows
    /// from 0), with pages of 1,000 rows, and its footer.
    fn parquet_file(groups: usize, rows: usize) -> (Vec<u8>, Arc<ParquetMetaData>) {
        use arrow::array::{Float64Array, Int64Array};
        use arrow::record_batch::RecordBatch;
        let batch = |g: usize| {
            let first = (g * rows) as i64;
            RecordBatch::try_from_iter([
                (
                    "t",
                    Arc::new(Int64Array::from_iter_values(first..first + rows as i64)) as arrow::array::ArrayRef,
                ),
                (
                    "v",
                    Arc::new(Float64Array::from_iter_values(
                        (0..rows).map(|i| (i * 7919 % 1000) as f64),
                    )),
                ),
            ])
            .unwrap()
        };
        let props = parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(rows))
            .set_data_page_row_count_limit(1000)
            .set_write_batch_size(1000)
            .build();
        let mut bytes = vec![];
        let mut writer = parquet::arrow::ArrowWriter::try_new(&mut bytes, batch(0).schema(), Some(props)).unwrap();
        for g in 0..groups {
            writer.write(&batch(g)).unwrap();
        }
        writer.close().unwrap();
        let footer = parquet::file::metadata::ParquetMetaDataReader::new()
            .with_page_index_policy(parquet::file::metadata::PageIndexPolicy::Required)
            .parse_and_finish(&bytes::Bytes::from(bytes.clone()))
            .unwrap();
        (bytes, Arc::new(footer))
    }

    /// The rows of each row group that `unit` reads: those of row groups whose first page starts
    /// in its range, as its access plan selects them (DataFusion's rules).
    fn rows_read(unit: &PartitionedFile, footer: &ParquetMetaData) -> Vec<usize> {
        let size = unit.object_meta.size;
        let starts = row_group_starts(footer, size).unwrap();
        let (start, end) = unit
            .range
            .as_ref()
            .map(|r| (r.start as u64, r.end as u64))
            .unwrap_or((0, size));
        let plan = unit.extension::<ParquetAccessPlan>();
        (0..footer.num_row_groups())
            .map(|g| {
                let rows = footer.row_group(g).num_rows() as usize;
                if starts[g] < start || starts[g] >= end {
                    return 0;
                }
                match plan.map(|p| &p.inner()[g]) {
                    None | Some(RowGroupAccess::Scan) => rows,
                    Some(RowGroupAccess::Skip) => 0,
                    Some(RowGroupAccess::Selection(s)) => s.row_count(),
                }
            })
            .collect()
    }

    #[test]
    fn files_with_known_footers_are_cut_at_row_groups_and_the_queue_ends_with_halves() {
        let (bytes, footer) = parquet_file(12, 40_000);
        let size = bytes.len() as u64;
        let file = PartitionedFile::new("f.parquet", size);
        let other = PartitionedFile::new("g.parquet", size / 3);
        let known = footer.clone();
        let units = split(
            vec![file, other],
            2,
            &move |f| (f.path().as_ref() == "f.parquet").then(|| known.clone()),
            false,
        );
        let ours: Vec<&Unit> = units.iter().filter(|u| u.file.path().as_ref() == "f.parquet").collect();
        assert!(ours.len() > 4, "{}", ours.len());
        // Every row of every row group read exactly once.
        let mut read = vec![0usize; 12];
        for u in &ours {
            for (g, n) in rows_read(&u.file, &footer).into_iter().enumerate() {
                read[g] += n;
            }
        }
        assert_eq!(read, vec![40_000; 12]);
        // Ranges start where row groups start (the first at the file's start).
        let starts = row_group_starts(&footer, size).unwrap();
        assert!(ours.iter().all(|u| {
            let start = range_of(&u.file).0 as u64;
            start == 0 || starts.contains(&start)
        }));
        // The queue ends with the halves of two row groups.
        let queue: Vec<PartitionedFile> = groups(units, 2, true).into_iter().flatten().collect();
        let tail: Vec<usize> = queue[queue.len() - 4..]
            .iter()
            .map(|f| rows_read(f, &footer).into_iter().sum())
            .collect();
        assert_eq!(tail, vec![20_000; 4]);
        // Under one partition, or when the footer is unknown: no halves.
        let whole = split(
            vec![PartitionedFile::new("f.parquet", size)],
            1,
            &|_| Some(footer.clone()),
            false,
        );
        assert_eq!(whole.len(), 1);
        let unknown = split(vec![PartitionedFile::new("f.parquet", size)], 2, &|_| None, false);
        assert!(unknown
            .iter()
            .all(|u| u.file.extension::<ParquetAccessPlan>().is_none()));
    }

    #[test]
    fn halves_keep_a_page_pruning_plan() {
        let (bytes, footer) = parquet_file(3, 40_000);
        let size = bytes.len() as u64;
        // Row group 0 skipped, row group 1 read in part by an earlier plan.
        let mut plan = ParquetAccessPlan::new_all(3);
        plan.skip(0);
        plan.scan_selection(
            1,
            RowSelection::from(vec![RowSelector::skip(30_000), RowSelector::select(10_000)]),
        );
        let file = PartitionedFile::new("f.parquet", size).with_extension(plan);
        let units = split(vec![file], 2, &|_| Some(footer.clone()), false);
        let mut read = vec![0usize; 3];
        for u in &units {
            for (g, n) in rows_read(&u.file, &footer).into_iter().enumerate() {
                read[g] += n;
            }
        }
        assert_eq!(read, vec![0, 10_000, 40_000]);
        // Row group 2, read whole, is halved; row group 1, read in part, is not.
        let parts: Vec<Vec<usize>> = units.iter().map(|u| rows_read(&u.file, &footer)).collect();
        assert_eq!(parts.iter().filter(|p| p[2] == 20_000).count(), 2, "{parts:?}");
        assert_eq!(parts.iter().filter(|p| p[1] == 10_000).count(), 1, "{parts:?}");
    }

    /// DataFusion's Parquet scan of the units `split` makes of a file (footer known, so cut at
    /// row groups with halves at the end) reads each row once: the values, not only their count.
    #[tokio::test]
    async fn a_scan_of_the_units_reads_every_row_once() {
        use arrow::array::{Array, Int64Array};
        use datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder, ParquetSource};
        use datafusion::datasource::source::DataSourceExec;
        use datafusion::execution::object_store::ObjectStoreUrl;
        use datafusion::prelude::SessionContext;
        use object_store::ObjectStoreExt;
        let (bytes, footer) = parquet_file(12, 40_000);
        let size = bytes.len() as u64;
        let store = Arc::new(object_store::memory::InMemory::new());
        store
            .put(
                &object_store::path::Path::from("f.parquet"),
                bytes::Bytes::from(bytes).into(),
            )
            .await
            .unwrap();
        let ctx = SessionContext::new();
        let url = ObjectStoreUrl::parse("memory://").unwrap();
        ctx.register_object_store(url.as_ref(), store);
        let units = split(
            vec![PartitionedFile::new("f.parquet", size)],
            2,
            &|_| Some(footer.clone()),
            false,
        );
        assert!(units
            .iter()
            .any(|u| matches!(u.file.extension::<ParquetAccessPlan>(), Some(p) if p.inner().iter().any(|a| matches!(a, RowGroupAccess::Selection(_))))));
        let schema = parquet::arrow::parquet_to_arrow_schema(footer.file_metadata().schema_descr(), None).unwrap();
        let source = ParquetSource::new(Arc::new(schema)).with_enable_page_index(true);
        let config = FileScanConfigBuilder::new(url, Arc::new(source))
            .with_file_groups(groups(units, 2, true).into_iter().map(FileGroup::new).collect())
            .build();
        let plan = DataSourceExec::from_data_source(config);
        let batches = datafusion::physical_plan::collect(plan, ctx.task_ctx()).await.unwrap();
        let mut t: Vec<i64> = batches
            .iter()
            .flat_map(|b| {
                let c = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
                (0..c.len()).map(|i| c.value(i)).collect::<Vec<_>>()
            })
            .collect();
        t.sort_unstable();
        assert_eq!(t, (0..480_000).collect::<Vec<i64>>());
    }

    #[test]
    fn a_shared_queue_runs_largest_first_and_own_groups_stay_balanced() {
        let mib = 1024 * 1024;
        let units = || -> Vec<Unit> {
            [3, 40, 1, 25, 40, 8]
                .iter()
                .enumerate()
                .map(|(i, m)| Unit::whole(PartitionedFile::new(format!("{i}.parquet"), m * mib)))
                .collect()
        };
        let queue: Vec<u64> = groups(units(), 2, true)
            .into_iter()
            .flatten()
            .map(|u| u.object_meta.size / mib)
            .collect();
        assert_eq!(queue, vec![40, 40, 25, 8, 3, 1]);
        // Ranges of one file, equal in size, keep their file order.
        let file = PartitionedFile::new("r.parquet", 30 * mib);
        let ranges: Vec<Unit> = (0..3)
            .map(|i| Unit::whole(file.clone().with_range(i * 10 * mib as i64, (i + 1) * 10 * mib as i64)))
            .collect();
        let starts: Vec<i64> = groups(ranges, 2, true)
            .into_iter()
            .flatten()
            .map(|u| u.range.unwrap().start)
            .collect();
        assert_eq!(starts, vec![0, 10 * mib as i64, 20 * mib as i64]);
        // Without a shared queue: round-robin, as given.
        let own = groups(units(), 2, false);
        assert_eq!(own.len(), 2);
        assert_eq!(own[0].len(), 3);
        assert_eq!(own[1].len(), 3);
        // Fewer units than groups: no empty group beyond the first.
        assert_eq!(groups(vec![Unit::whole(file)], 4, true).len(), 1);
    }
}
