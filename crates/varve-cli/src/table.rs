//! The `table` output format: query results as an aligned text table that fits the terminal.
//!
//! Cells read as Arrow displays values; a value longer than [`MAX_CELL_CHARS`] is cut with an
//! ellipsis; when the columns are wider than the terminal, columns in the middle are left out and
//! an `…` column stands in their place (as DuckDB's shell does), and the footer says how many. The
//! footer counts rows (`1 row`, `12 rows`); an empty result prints its header and `0 rows`.
//! Numbers are right-aligned. Off a terminal (`--format table` into a pipe) the width is `COLUMNS`
//! when set, else unlimited.

use std::io::IsTerminal;

use comfy_table::{Cell, CellAlignment, Table};
use varve::arrow::array::RecordBatch;
use varve::arrow::datatypes::SchemaRef;
use varve::arrow::util::display::{ArrayFormatter, FormatOptions};
use varve::Result;

/// Longest value shown in full, in characters.
pub(crate) const MAX_CELL_CHARS: usize = 48;

/// Characters a column takes besides its text: `| ` before and one space after.
const COLUMN_FRAME: usize = 3;

/// The width tables are fitted to: the terminal's, else `COLUMNS`, else none.
pub(crate) fn available_width() -> Option<usize> {
    if std::io::stdout().is_terminal() {
        if let Some((terminal_size::Width(w), _)) = terminal_size::terminal_size() {
            return Some(w as usize);
        }
    }
    std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok())
}

fn cut(s: String) -> String {
    if s.chars().count() <= MAX_CELL_CHARS {
        return s;
    }
    let mut out: String = s.chars().take(MAX_CELL_CHARS - 1).collect();
    out.push('…');
    out
}

/// Renders `batches` as a table at most `width` characters wide (when given), with a row-count
/// footer. `whole` keeps every value whole and every column (for `EXPLAIN`, whose plan text is the
/// point).
///
/// Errors: a value Arrow cannot format.
pub(crate) fn render(schema: &SchemaRef, batches: &[RecordBatch], width: Option<usize>, whole: bool) -> Result<String> {
    let cut = |s: String| if whole { s } else { cut(s) };
    let width = if whole { None } else { width };
    let n = schema.fields().len();
    let options = FormatOptions::default().with_display_error(true).with_null("NULL");
    let mut rows: Vec<Vec<String>> = Vec::new();
    for b in batches {
        let formatters = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        for r in 0..b.num_rows() {
            rows.push(formatters.iter().map(|f| cut(f.value(r).to_string())).collect());
        }
    }
    let headers: Vec<String> = schema.fields().iter().map(|f| cut(f.name().clone())).collect();
    let widths: Vec<usize> = (0..n)
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([headers[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let shown = fit(&widths, width);
    let elided = n - shown.iter().filter(|c| c.is_some()).count();

    let mut t = Table::new();
    t.load_preset("||--+-++|    ++++++");
    let header: Vec<Cell> = shown
        .iter()
        .map(|c| Cell::new(c.map(|i| headers[i].as_str()).unwrap_or("…")))
        .collect();
    t.set_header(header);
    for r in &rows {
        t.add_row(shown.iter().map(|c| Cell::new(c.map(|i| r[i].as_str()).unwrap_or("…"))));
    }
    for (k, c) in shown.iter().enumerate() {
        if let (Some(i), Some(col)) = (c, t.column_mut(k)) {
            if schema.field(*i).data_type().is_numeric() {
                col.set_cell_alignment(CellAlignment::Right);
            }
        }
    }
    let mut out = t.to_string();
    out.push('\n');
    out.push_str(&match rows.len() {
        1 => "1 row".to_string(),
        k => format!("{k} rows"),
    });
    if elided > 0 {
        out.push_str(&format!(
            " ({n} columns, {elided} not shown: the terminal is too narrow; --format csv or json shows all)"
        ));
    }
    Ok(out)
}

/// Which columns fit in `width`: all when they do; else as many as fit taken alternately from the
/// left and the right, with `None` (the `…` column) between the two sides.
fn fit(widths: &[usize], width: Option<usize>) -> Vec<Option<usize>> {
    let all: Vec<Option<usize>> = (0..widths.len()).map(Some).collect();
    let Some(width) = width else { return all };
    let total: usize = widths.iter().map(|w| w + COLUMN_FRAME).sum::<usize>() + 1;
    if total <= width || widths.len() <= 2 {
        return all;
    }
    // Room for the `…` column and the closing border.
    let mut room = width.saturating_sub(1 + 1 + COLUMN_FRAME);
    let (mut left, mut right) = (Vec::new(), Vec::new());
    let (mut lo, mut hi) = (0usize, widths.len() - 1);
    let mut take_left = true;
    while lo <= hi {
        let i = if take_left { lo } else { hi };
        let need = widths[i] + COLUMN_FRAME;
        if need > room {
            break;
        }
        room -= need;
        if take_left {
            left.push(i);
            lo += 1;
        } else {
            right.push(i);
            if hi == 0 {
                break;
            }
            hi -= 1;
        }
        take_left = !take_left;
    }
    if left.is_empty() {
        // Not even one column fits: show the first anyway.
        left.push(0);
    }
    let mut out: Vec<Option<usize>> = left.into_iter().map(Some).collect();
    out.push(None);
    out.extend(right.into_iter().rev().map(Some));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_tables_keep_both_ends() {
        assert_eq!(fit(&[5, 5, 5], Some(100)), vec![Some(0), Some(1), Some(2)]);
        assert_eq!(fit(&[5, 5, 5], None), vec![Some(0), Some(1), Some(2)]);
        // Each column takes 8; 30 leaves room for three and the `…` column.
        assert_eq!(fit(&[5, 5, 5, 5, 5], Some(30)), vec![Some(0), Some(1), None, Some(4)]);
        assert_eq!(fit(&[50, 5, 5], Some(20)), vec![Some(0), None]);
    }

    #[test]
    fn long_values_are_cut() {
        let s = "x".repeat(100);
        let c = cut(s);
        assert_eq!(c.chars().count(), MAX_CELL_CHARS);
        assert!(c.ends_with('…'));
        assert_eq!(cut("short".into()), "short");
    }
}
