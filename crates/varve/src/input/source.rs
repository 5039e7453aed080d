//! Opening an input's bytes for reading: files or memory, gzip decompression (detected from the
//! content), a UTF-8 byte-order mark removed, progress counted in stored bytes.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use crate::error::{Error, ErrorKind, Result};

use super::{Data, Input, Progress};

/// A buffered reader of an input's decoded text (or raw bytes, for Parquet).
pub(crate) type TextReader = BufReader<Box<dyn Read + Send>>;

const UTF8_BOM: [u8; 3] = [0xef, 0xbb, 0xbf];

/// Errors: [`ErrorKind::NotFound`] naming the file when it does not exist.
pub(crate) fn check_exists(path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(_) => Ok(()),
        Err(e) => Err(io_error(&path.display().to_string(), e)),
    }
}

/// An I/O error reading input `name` as an engine error (the I/O error kept as its source).
pub(crate) fn io_error(name: &str, e: std::io::Error) -> Error {
    let (kind, what) = match e.kind() {
        std::io::ErrorKind::NotFound => (ErrorKind::NotFound, "no such file".to_string()),
        std::io::ErrorKind::UnexpectedEof => (
            ErrorKind::InvalidInput,
            "the file is truncated (unexpected end of input)".to_string(),
        ),
        std::io::ErrorKind::InvalidData if e.to_string().contains("deflate") || e.to_string().contains("gzip") => (
            ErrorKind::InvalidInput,
            "the file is truncated or not valid gzip".to_string(),
        ),
        _ => (ErrorKind::InvalidInput, e.to_string()),
    };
    Error::new(kind, format!("{name}: {what}")).with_source(e)
}

/// Counts bytes read and reports them to a [`Progress`].
struct Counted<R> {
    inner: R,
    progress: Progress,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        (self.progress)(n as u64);
        Ok(n)
    }
}

/// The raw bytes of an input, as stored.
fn raw(input: &Input, progress: Option<Progress>) -> Result<Box<dyn Read + Send>> {
    let r: Box<dyn Read + Send> = match &input.data {
        Data::File(p) => Box::new(File::open(p).map_err(|e| io_error(&input.name, e))?),
        Data::Bytes(b) => Box::new(std::io::Cursor::new(b.clone())),
    };
    Ok(match progress {
        Some(progress) => Box::new(Counted { inner: r, progress }),
        None => r,
    })
}

/// The input's text: decompressed when it starts with the gzip magic bytes, without a UTF-8
/// byte-order mark at the start (Excel's "CSV UTF-8" writes one).
pub(crate) fn open_text(input: &Input, progress: Option<Progress>) -> Result<TextReader> {
    let mut raw = raw(input, progress)?;
    let mut magic = [0u8; 2];
    let n = read_fully(&mut raw, &mut magic).map_err(|e| io_error(&input.name, e))?;
    let head = std::io::Cursor::new(magic[..n].to_vec()).chain(raw);
    let decoded: Box<dyn Read + Send> = if n == 2 && magic == [0x1f, 0x8b] {
        Box::new(flate2::read::MultiGzDecoder::new(head))
    } else {
        Box::new(head)
    };
    let mut decoded = decoded;
    let mut start = [0u8; 3];
    let n = read_fully(&mut decoded, &mut start).map_err(|e| io_error(&input.name, e))?;
    let keep = if start[..n] == UTF8_BOM { 3 } else { 0 };
    let text: Box<dyn Read + Send> = Box::new(std::io::Cursor::new(start[keep..n].to_vec()).chain(decoded));
    Ok(BufReader::with_capacity(1 << 20, text))
}

fn read_fully(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}
