//! The `table` output format: query results as an aligned text table that fits the terminal.
//!
//! Cells read as Arrow displays values. Values are shown whole while the table fits the width;
//! when it does not, the widest columns are narrowed (their longer values cut with an ellipsis)
//! until it does, down to [`MIN_CELL_CHARS`] each; when even that is too wide, columns in the
//! middle are left out and an `…` column stands in their place (as DuckDB's shell does), and the
//! footer says how many. The footer counts rows (`1 row`, `12 rows`); an empty result prints its
//! header and `0 rows`. Numbers are right-aligned. The width is the terminal's; off a terminal
//! (`--format table` into a pipe) it is `COLUMNS` when set, else unlimited. `--format wide` shows
//! every value and column whole, however wide.

use std::io::IsTerminal;

use comfy_table::{Cell, CellAlignment, Table};
use varve::arrow::array::RecordBatch;
use varve::arrow::datatypes::SchemaRef;
use varve::arrow::util::display::{ArrayFormatter, FormatOptions};
use varve::Result;

/// The narrowest a column is made to fit the width, in characters: a value longer than this
/// may be cut to it.
pub(crate) const MIN_CELL_CHARS: usize = 12;

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

/// `s` cut to at most `max` characters, its last one an ellipsis when it was cut.
fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The widest a column may be so that columns of natural widths `widths` fit in `width`
/// characters (borders included): `None` when they fit whole; never under [`MIN_CELL_CHARS`]
/// (the columns may then still not fit: [`fit`] leaves some out).
fn column_cap(widths: &[usize], width: Option<usize>) -> Option<usize> {
    let width = width?;
    let total = |cap: usize| widths.iter().map(|w| (*w).min(cap) + COLUMN_FRAME).sum::<usize>() + 1;
    let widest = widths.iter().copied().max().unwrap_or(0);
    if total(widest) <= width {
        return None;
    }
    // The largest cap that fits, found by halving the range (total grows with the cap).
    let (mut lo, mut hi) = (MIN_CELL_CHARS, widest);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        match total(mid) <= width {
            true => lo = mid,
            false => hi = mid - 1,
        }
    }
    Some(lo)
}

/// Renders `batches` as a table at most `width` characters wide (when given; see the module
/// docs), with a row-count footer. `whole` keeps every value whole and every column (`--format
/// wide`, and `EXPLAIN`, whose plan text is the point).
///
/// Errors: a value Arrow cannot format.
pub(crate) fn render(schema: &SchemaRef, batches: &[RecordBatch], width: Option<usize>, whole: bool) -> Result<String> {
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
            rows.push(formatters.iter().map(|f| f.value(r).to_string()).collect());
        }
    }
    let mut headers: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let natural = column_widths(&headers, &rows, n);
    if let Some(cap) = column_cap(&natural, width) {
        for cell in rows.iter_mut().flatten().chain(headers.iter_mut()) {
            if cell.chars().count() > cap {
                *cell = cut(cell, cap);
            }
        }
    }
    let widths = column_widths(&headers, &rows, n);
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
            " ({n} columns, {elided} not shown: the terminal is too narrow; --format wide, csv or json shows all)"
        ));
    }
    Ok(out)
}

/// The width of each of `n` columns: its longest value or header, in characters.
fn column_widths(headers: &[String], rows: &[Vec<String>], n: usize) -> Vec<usize> {
    (0..n)
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([headers[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect()
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
        let c = cut(&s, 20);
        assert_eq!(c.chars().count(), 20);
        assert!(c.ends_with('…'));
        assert_eq!(cut("short", 20), "short");
    }

    #[test]
    fn the_widest_columns_narrow_to_fit() {
        // Whole when they fit, or with no width.
        assert_eq!(column_cap(&[10, 100], Some(200)), None);
        assert_eq!(column_cap(&[10, 100], None), None);
        // 10 + 3, c + 3 and a border: the widest cap within 80 is 60.
        assert_eq!(column_cap(&[10, 100], Some(80)), Some(63));
        // Never under the minimum, even when the columns then do not fit.
        assert_eq!(column_cap(&[100, 100, 100], Some(20)), Some(MIN_CELL_CHARS));
    }
}
