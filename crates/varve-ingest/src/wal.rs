//! The write-ahead log: decoded records wait here, on local disk, between Kafka and a commit.
//!
//! A pipeline's log is a directory of segment files `<seq>.wal` (`seq` zero-padded, increasing).
//! One segment is open for appends; at each commit it is sealed and a new one opened, and a
//! sealed segment is deleted once its rows are committed. A segment is a magic line
//! (`VARVE-WAL 1\n`) and frames, each `len: u32 LE | crc32(payload): u32 LE | payload`:
//!
//! - a rows frame: one Kafka partition's records `from..to` (offsets; `to` exclusive), decoded
//!   and fitted: a JSON header, then the rows and the rejected records as Arrow IPC streams;
//! - a discard frame: forget the earlier frames of one partition in this segment (written when a
//!   commit found that another writer owns those offsets).
//!
//! Appends are written and, with [`Fsync::Batch`] (the default), fsynced before the records count
//! as read. On start every segment is read back; a torn last frame (a crash mid-write) ends the
//! segment and is dropped: those records were never committed anywhere, and Kafka still has them.
//! Nothing here decides what is committed: a replayed segment's positions are checked against the
//! table's ([`varve::SourceCheckpoint`]), so a segment committed before a crash is a duplicate.
//!
//! The frames' rows are what a later union read (the server answering queries with rows not yet
//! committed) will serve.

use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, BinaryArray, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::ipc::reader::StreamReader;
use arrow::ipc::writer::StreamWriter;

const MAGIC: &[u8] = b"VARVE-WAL 1\n";
const KIND_ROWS: u8 = 1;
const KIND_DISCARD: u8 = 2;
/// Largest frame accepted on read: a longer length is a torn or corrupt header.
const MAX_FRAME: u32 = 1 << 30;

/// When appends reach the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fsync {
    /// fsync after each batch of records (a crash of the machine loses nothing read).
    Batch,
    /// Leave it to the OS (a process crash loses nothing; a machine crash may lose the tail,
    /// which is read from Kafka again).
    Off,
}

/// A record refused by decoding or fitting.
#[derive(Debug, Clone, PartialEq)]
pub struct Reject {
    pub offset: i64,
    /// The record's Kafka timestamp (ms since the epoch).
    pub kafka_ms: i64,
    pub payload: Vec<u8>,
    pub error: String,
}

/// One partition's records `from..to`.
#[derive(Debug, Clone)]
pub struct Frame {
    pub topic: String,
    pub partition: i32,
    pub from: i64,
    pub to: i64,
    pub rows: Option<RecordBatch>,
    pub rejects: Vec<Reject>,
    /// The Kafka offset of each row of `rows`.
    pub row_offsets: Vec<i64>,
    /// The records' Kafka timestamps (ms), for freshness; not stored in the log.
    pub kafka_ms: Vec<i64>,
}

impl Frame {
    /// The stream name in the table's checkpoint: `topic/partition`.
    pub fn stream(&self) -> String {
        stream_name(&self.topic, self.partition)
    }

    /// Bytes the frame holds in memory (about its size in the log).
    pub fn bytes(&self) -> usize {
        self.rows.as_ref().map_or(0, |b| b.get_array_memory_size())
            + self
                .rejects
                .iter()
                .map(|r| r.payload.len() + r.error.len() + 16)
                .sum::<usize>()
    }
}

/// `topic/partition`.
pub fn stream_name(topic: &str, partition: i32) -> String {
    format!("{topic}/{partition}")
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Header {
    topic: String,
    partition: i32,
    from: i64,
    to: i64,
}

fn reject_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("offset", DataType::Int64, false),
        Field::new("kafka_ms", DataType::Int64, false),
        Field::new("payload", DataType::Binary, false),
        Field::new("error", DataType::Utf8, false),
    ]))
}

fn ipc(batch: &RecordBatch) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut w = StreamWriter::try_new(&mut out, &batch.schema()).map_err(std::io::Error::other)?;
    w.write(batch).map_err(std::io::Error::other)?;
    w.finish().map_err(std::io::Error::other)?;
    drop(w);
    Ok(out)
}

fn from_ipc(bytes: &[u8]) -> std::io::Result<RecordBatch> {
    let mut r = StreamReader::try_new(bytes, None).map_err(std::io::Error::other)?;
    match r.next() {
        Some(b) => b.map_err(std::io::Error::other),
        None => Err(std::io::Error::other("empty Arrow stream in a log frame")),
    }
}

fn put_chunk(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

fn encode_rows(f: &Frame) -> std::io::Result<Vec<u8>> {
    let mut p = vec![KIND_ROWS];
    let h = serde_json::to_vec(&Header {
        topic: f.topic.clone(),
        partition: f.partition,
        from: f.from,
        to: f.to,
    })?;
    put_chunk(&mut p, &h);
    match &f.rows {
        Some(b) => put_chunk(&mut p, &ipc(b)?),
        None => put_chunk(&mut p, &[]),
    }
    if f.rejects.is_empty() {
        put_chunk(&mut p, &[]);
    } else {
        let cols: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from_iter_values(f.rejects.iter().map(|r| r.offset))),
            Arc::new(Int64Array::from_iter_values(f.rejects.iter().map(|r| r.kafka_ms))),
            Arc::new(BinaryArray::from_iter_values(
                f.rejects.iter().map(|r| r.payload.as_slice()),
            )),
            Arc::new(StringArray::from_iter_values(
                f.rejects.iter().map(|r| r.error.as_str()),
            )),
        ];
        let b = RecordBatch::try_new(reject_schema(), cols).map_err(std::io::Error::other)?;
        put_chunk(&mut p, &ipc(&b)?);
    }
    let offsets: Vec<u8> = f.row_offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
    put_chunk(&mut p, &offsets);
    Ok(p)
}

fn take_chunk<'a>(p: &mut &'a [u8]) -> std::io::Result<&'a [u8]> {
    let bad = || std::io::Error::other("malformed log frame");
    if p.len() < 4 {
        return Err(bad());
    }
    let n = u32::from_le_bytes(p[..4].try_into().unwrap()) as usize;
    if p.len() < 4 + n {
        return Err(bad());
    }
    let c = &p[4..4 + n];
    *p = &p[4 + n..];
    Ok(c)
}

/// What a segment holds after its discard frames are applied.
fn decode(payload: &[u8], frames: &mut Vec<Frame>) -> std::io::Result<()> {
    let (kind, mut p) = payload
        .split_first()
        .ok_or_else(|| std::io::Error::other("empty log frame"))?;
    let h: Header = serde_json::from_slice(take_chunk(&mut p)?)?;
    match *kind {
        KIND_DISCARD => {
            frames.retain(|f| !(f.topic == h.topic && f.partition == h.partition));
            Ok(())
        }
        KIND_ROWS => {
            let rows = match take_chunk(&mut p)? {
                [] => None,
                b => Some(from_ipc(b)?),
            };
            let rejects = match take_chunk(&mut p)? {
                [] => vec![],
                b => {
                    let b = from_ipc(b)?;
                    use arrow::array::AsArray;
                    let off = b.column(0).as_primitive::<arrow::datatypes::Int64Type>();
                    let ms = b.column(1).as_primitive::<arrow::datatypes::Int64Type>();
                    let pay = b.column(2).as_binary::<i32>();
                    let err = b.column(3).as_string::<i32>();
                    (0..b.num_rows())
                        .map(|i| Reject {
                            offset: off.value(i),
                            kafka_ms: ms.value(i),
                            payload: pay.value(i).to_vec(),
                            error: err.value(i).to_string(),
                        })
                        .collect()
                }
            };
            let row_offsets = take_chunk(&mut p)?
                .chunks_exact(8)
                .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect::<Vec<i64>>();
            if row_offsets.len() != rows.as_ref().map_or(0, |b| b.num_rows()) {
                return Err(std::io::Error::other("log frame: row offsets do not match the rows"));
            }
            frames.push(Frame {
                topic: h.topic,
                partition: h.partition,
                from: h.from,
                to: h.to,
                rows,
                rejects,
                row_offsets,
                kafka_ms: vec![],
            });
            Ok(())
        }
        k => Err(std::io::Error::other(format!("unknown log frame kind {k}"))),
    }
}

/// The open segment of a pipeline's log.
pub struct Segment {
    pub seq: u64,
    pub path: PathBuf,
    file: File,
    fsync: Fsync,
    /// The frames appended, in memory (discards applied).
    pub frames: Vec<Frame>,
    /// Bytes written to the file.
    pub bytes: u64,
}

impl Segment {
    /// Creates segment `seq` in `dir`.
    ///
    /// Errors: I/O errors creating or syncing the file.
    pub fn create(dir: &Path, seq: u64, fsync: Fsync) -> std::io::Result<Segment> {
        let path = dir.join(format!("{seq:020}.wal"));
        let mut file = OpenOptions::new().create_new(true).append(true).open(&path)?;
        file.write_all(MAGIC)?;
        if fsync == Fsync::Batch {
            file.sync_all()?;
            File::open(dir)?.sync_all()?;
        }
        Ok(Segment {
            seq,
            path,
            file,
            fsync,
            frames: vec![],
            bytes: MAGIC.len() as u64,
        })
    }

    fn write(&mut self, payloads: &[Vec<u8>]) -> std::io::Result<()> {
        let mut buf = Vec::with_capacity(payloads.iter().map(|p| p.len() + 8).sum());
        for p in payloads {
            buf.extend_from_slice(&(p.len() as u32).to_le_bytes());
            buf.extend_from_slice(&crc32fast::hash(p).to_le_bytes());
            buf.extend_from_slice(p);
        }
        self.file.write_all(&buf)?;
        if self.fsync == Fsync::Batch {
            self.file.sync_data()?;
        }
        self.bytes += buf.len() as u64;
        Ok(())
    }

    /// Appends frames (one batch of records) and syncs them per the policy.
    ///
    /// Errors: I/O errors; the frames are then not in the segment.
    pub fn append(&mut self, frames: Vec<Frame>) -> std::io::Result<()> {
        let payloads = frames.iter().map(encode_rows).collect::<std::io::Result<Vec<_>>>()?;
        self.write(&payloads)?;
        self.frames.extend(frames);
        Ok(())
    }

    /// Forgets the frames of one partition (in memory and, by a discard frame, in the file).
    ///
    /// Errors: I/O errors writing the discard frame.
    pub fn discard(&mut self, topic: &str, partition: i32) -> std::io::Result<()> {
        if !self.frames.iter().any(|f| f.topic == topic && f.partition == partition) {
            return Ok(());
        }
        let mut p = vec![KIND_DISCARD];
        let h = serde_json::to_vec(&Header {
            topic: topic.to_string(),
            partition,
            from: 0,
            to: 0,
        })?;
        put_chunk(&mut p, &h);
        self.write(&[p])?;
        self.frames.retain(|f| !(f.topic == topic && f.partition == partition));
        Ok(())
    }
}

/// A sealed segment read back: its path and frames.
pub struct Sealed {
    pub seq: u64,
    pub path: PathBuf,
    pub frames: Vec<Frame>,
    /// Whether a torn or corrupt tail was dropped.
    pub torn: bool,
}

/// The segments in `dir`, oldest first, read back.
///
/// Errors: I/O errors listing or reading the directory; a file that is not a segment.
pub fn read_all(dir: &Path) -> std::io::Result<Vec<Sealed>> {
    let mut out = Vec::new();
    let mut names: Vec<(u64, PathBuf)> = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let name = e.file_name().to_string_lossy().to_string();
        if let Some(seq) = name.strip_suffix(".wal").and_then(|s| s.parse::<u64>().ok()) {
            names.push((seq, e.path()));
        }
    }
    names.sort();
    for (seq, path) in names {
        let (frames, torn) = read_segment(&path)?;
        out.push(Sealed {
            seq,
            path,
            frames,
            torn,
        });
    }
    Ok(out)
}

fn read_segment(path: &Path) -> std::io::Result<(Vec<Frame>, bool)> {
    let mut r = BufReader::new(File::open(path)?);
    let mut magic = vec![0u8; MAGIC.len()];
    if r.read_exact(&mut magic).is_err() {
        // Created but not written: nothing in it.
        return Ok((vec![], false));
    }
    if magic != MAGIC {
        return Err(std::io::Error::other(format!(
            "{}: not a Varve write-ahead log segment",
            path.display()
        )));
    }
    let mut frames = Vec::new();
    loop {
        let mut head = [0u8; 8];
        match r.read_exact(&mut head) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok((frames, false)),
            Err(e) => return Err(e),
        }
        let len = u32::from_le_bytes(head[..4].try_into().unwrap());
        let crc = u32::from_le_bytes(head[4..].try_into().unwrap());
        if len > MAX_FRAME {
            return Ok((frames, true));
        }
        let mut p = vec![0u8; len as usize];
        if r.read_exact(&mut p).is_err() || crc32fast::hash(&p) != crc {
            return Ok((frames, true));
        }
        if decode(&p, &mut frames).is_err() {
            return Ok((frames, true));
        }
    }
}

/// The next segment number after those in `dir`.
pub fn next_seq(dir: &Path) -> std::io::Result<u64> {
    let mut max = 0;
    for e in std::fs::read_dir(dir)? {
        let name = e?.file_name().to_string_lossy().to_string();
        if let Some(seq) = name.strip_suffix(".wal").and_then(|s| s.parse::<u64>().ok()) {
            max = max.max(seq + 1);
        }
    }
    Ok(max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(p: i32, from: i64, to: i64) -> Frame {
        let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Int64, false)]));
        let rows = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from_iter_values(from..to))]).unwrap();
        Frame {
            topic: "t".into(),
            partition: p,
            from,
            to,
            row_offsets: (from..to).collect(),
            rows: Some(rows),
            rejects: vec![Reject {
                offset: from,
                kafka_ms: 5,
                payload: b"bad".to_vec(),
                error: "why".into(),
            }],
            kafka_ms: vec![],
        }
    }

    #[test]
    fn round_trip_discard_and_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Segment::create(dir.path(), 3, Fsync::Batch).unwrap();
        s.append(vec![frame(0, 0, 10), frame(1, 0, 5)]).unwrap();
        s.discard("t", 1).unwrap();
        s.append(vec![frame(1, 7, 9)]).unwrap();
        let path = s.path.clone();
        drop(s);
        let all = read_all(dir.path()).unwrap();
        assert_eq!(all.len(), 1);
        let f = &all[0].frames;
        assert_eq!(f.len(), 2);
        assert_eq!((f[0].partition, f[0].from, f[0].to), (0, 0, 10));
        assert_eq!((f[1].partition, f[1].from, f[1].to), (1, 7, 9));
        assert_eq!(f[0].rejects[0].payload, b"bad");
        assert_eq!(f[0].rows.as_ref().unwrap().num_rows(), 10);
        assert!(!all[0].torn);
        // A crash mid-frame: the torn tail is dropped, the frames before it kept.
        let len = std::fs::metadata(&path).unwrap().len();
        let file = OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(len - 3).unwrap();
        let all = read_all(dir.path()).unwrap();
        assert_eq!(all[0].frames.len(), 1);
        assert!(all[0].torn);
        assert_eq!(next_seq(dir.path()).unwrap(), 4);
    }
}
