//! `varve sql`: statements from the command line, a script (`-f FILE`, `-` for stdin) or an
//! interactive shell, all run in order in one SQL session (so `SET` applies to what follows).
//!
//! Input is fed line by line: a line starting with `.` outside a statement is a shell command
//! (`.tables`, `.schema`, `.mode`, `.timer`, `.help`, `.quit`); other lines gather until a `;`
//! ends a statement (the engine's tokenizer decides, so a `;` in a string does not). In a script
//! the first error stops the run; in the shell it is printed and the shell goes on.

use std::io::{BufRead, IsTerminal};
use std::path::{Path, PathBuf};
use std::time::Instant;

use varve::{Error, Lake, QueryResult, Result, Session};

use crate::output::{self, OutputFormat};

/// Lines of shell history kept in the history file.
const HISTORY_LINES: usize = 1000;

const HELP: &str = "\
Statements end with ; and may span lines. Shell commands:
  .tables              the tables of the lake
  .schema [TABLE]      CREATE TABLE statements (every table when none is named)
  .mode MODE           output format: table, wide, csv, json or ndjson
  .timer on|off        print each statement's run time
  .help                this text (also help, \\?)
  .quit                leave (also .exit, exit, quit, \\q, or Ctrl-D)
psql's \\dt and \\d list the tables, \\d TABLE shows one.";

/// Runs SQL statements in one session and prints their results.
pub(crate) struct Shell<'a> {
    lake: &'a Lake,
    session: Session,
    /// The output format; `None` picks per result (a table on a terminal, else CSV).
    format: Option<OutputFormat>,
    /// Where the results go instead of stdout (each result overwrites it: the last one stays).
    output: Option<PathBuf>,
    timer: bool,
    /// Text of a statement not yet ended by `;`.
    pending: String,
    /// Statements run so far (for error messages).
    count: usize,
    quit: bool,
    /// Typed at a prompt ([`Shell::interactive`]), not read from a script.
    interactive: bool,
}

impl<'a> Shell<'a> {
    pub(crate) fn new(lake: &'a Lake, session: Session, format: Option<OutputFormat>, output: Option<PathBuf>) -> Self {
        Shell {
            lake,
            session,
            format,
            output,
            timer: false,
            pending: String::new(),
            count: 0,
            quit: false,
            interactive: false,
        }
    }

    /// Runs `text` as a script: every statement, stopping at the first error.
    ///
    /// Errors: the first failing statement's, prefixed with its number when the script has more
    /// than one.
    pub(crate) async fn run_script(&mut self, text: &str) -> Result<()> {
        for line in text.lines() {
            self.feed(line).await?;
            if self.quit {
                return Ok(());
            }
        }
        self.finish().await
    }

    /// Reads a script from `path` (`-` is standard input) and runs it.
    pub(crate) async fn run_file(&mut self, path: &Path) -> Result<()> {
        let text = if path == Path::new("-") {
            let mut s = String::new();
            for line in std::io::stdin().lock().lines() {
                let line = line.map_err(|e| Error::invalid(format!("reading standard input: {e}")))?;
                s.push_str(&line);
                s.push('\n');
            }
            s
        } else {
            std::fs::read_to_string(path).map_err(|e| Error::invalid(format!("{}: {e}", path.display())))?
        };
        self.run_script(&text).await
    }

    /// One line of input: a shell command, or part of a statement (run when a `;` ends it).
    async fn feed(&mut self, line: &str) -> Result<()> {
        if self.pending.trim().is_empty() && line.trim_start().starts_with('.') {
            self.pending.clear();
            return self.command(line.trim()).await;
        }
        if self.pending.trim().is_empty() {
            if let Some(command) = psql_word(line) {
                self.pending.clear();
                return self.command(&command?).await;
            }
        }
        self.pending.push_str(line);
        self.pending.push('\n');
        // An unterminated string or quoted name may end on a later line.
        let Ok((statements, rest)) = varve::split_statements(&self.pending) else {
            return Ok(());
        };
        if statements.is_empty() {
            return Ok(());
        }
        self.pending = rest;
        for s in statements {
            self.statement(&s).await?;
        }
        Ok(())
    }

    /// Runs what is left at the end of the input (a last statement without `;`).
    async fn finish(&mut self) -> Result<()> {
        let text = std::mem::take(&mut self.pending);
        let (statements, rest) = varve::split_statements(&text)?;
        for s in statements
            .iter()
            .chain(std::iter::once(&rest).filter(|r| !r.is_empty()))
        {
            self.statement(s).await?;
        }
        Ok(())
    }

    async fn statement(&mut self, sql: &str) -> Result<()> {
        self.count += 1;
        let started = Instant::now();
        // A script's error names its statement; at the shell's prompt the statement is the one
        // just typed.
        let n = if self.interactive { 0 } else { self.count };
        let r = self
            .session
            .sql(sql)
            .await
            .map_err(|e| if n > 1 { e.context(format!("statement {n}")) } else { e })?;
        self.print(&r)?;
        if self.timer {
            eprintln!("run time: {:.1} ms", started.elapsed().as_secs_f64() * 1e3);
        }
        Ok(())
    }

    fn print(&self, r: &QueryResult) -> Result<()> {
        // `SET` and the like return nothing to show.
        if r.schema.fields().is_empty() {
            return Ok(());
        }
        output::write_result(r, self.format, self.output.as_deref())
    }

    async fn command(&mut self, line: &str) -> Result<()> {
        let mut words = line.split_whitespace();
        let name = words.next().unwrap_or_default();
        let args: Vec<&str> = words.collect();
        match (name, args.as_slice()) {
            (".quit" | ".exit" | ".q", []) => {
                self.quit = true;
                Ok(())
            }
            (".help", _) => output::line(HELP),
            (".tables", []) => {
                let names: Vec<String> = self.lake.tables().await?.iter().map(|t| t.to_string()).collect();
                if names.is_empty() {
                    eprintln!("no tables in {}", self.lake.url());
                    return Ok(());
                }
                output::line(&names.join("\n"))
            }
            (".schema", tables) => {
                let names: Vec<String> = if tables.is_empty() {
                    self.lake.tables().await?.iter().map(|t| t.to_string()).collect()
                } else {
                    tables.iter().map(|t| t.to_string()).collect()
                };
                let mut out = Vec::new();
                for t in names {
                    out.push(create_statement(&self.lake.describe(&t).await?));
                }
                if out.is_empty() {
                    return Ok(());
                }
                output::line(&out.join("\n"))
            }
            (".mode", [mode]) => {
                self.format = Some(match *mode {
                    "table" | "box" => OutputFormat::Table,
                    "wide" => OutputFormat::Wide,
                    "csv" => OutputFormat::Csv,
                    "json" => OutputFormat::Json,
                    "ndjson" | "jsonl" => OutputFormat::Ndjson,
                    other => {
                        return Err(Error::invalid(format!(
                            ".mode {other}: use table, wide, csv, json or ndjson"
                        )))
                    }
                });
                Ok(())
            }
            (".timer", [on]) => {
                self.timer = match *on {
                    "on" => true,
                    "off" => false,
                    other => return Err(Error::invalid(format!(".timer {other}: use on or off"))),
                };
                Ok(())
            }
            _ => Err(Error::invalid(format!(
                "unknown shell command {line:?}; .help lists them"
            ))),
        }
    }

    /// The interactive shell: line editing and history (in `~/.varve_history`), errors printed
    /// and the shell goes on; Ctrl-C drops the statement being typed, Ctrl-D leaves.
    pub(crate) async fn interactive(&mut self) -> Result<()> {
        use rustyline::error::ReadlineError;
        use rustyline::history::History;

        self.interactive = true;
        let mut editor = rustyline::DefaultEditor::new()
            .map_err(|e| Error::invalid(format!("cannot start the line editor: {e}")))?;
        let _ = editor.history_mut().set_max_len(HISTORY_LINES);
        let history = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".varve_history"));
        if let Some(h) = &history {
            let _ = editor.load_history(h);
        }
        eprintln!(
            "varve shell on {}: statements end with ; (.help for commands, Ctrl-D to leave)",
            self.lake.url()
        );
        loop {
            let prompt = if self.pending.trim().is_empty() {
                "varve> "
            } else {
                "  ...> "
            };
            match editor.readline(prompt) {
                Ok(line) => {
                    if !line.trim().is_empty() {
                        let _ = editor.add_history_entry(line.as_str());
                    }
                    if let Err(e) = self.feed(&line).await {
                        self.pending.clear();
                        if !e.has_io_kind(std::io::ErrorKind::BrokenPipe) {
                            eprintln!("error: {e}");
                        }
                    }
                    if self.quit {
                        break;
                    }
                }
                Err(ReadlineError::Interrupted) => self.pending.clear(),
                Err(ReadlineError::Eof) => break,
                Err(e) => return Err(Error::invalid(format!("reading the terminal: {e}"))),
            }
        }
        if let Some(h) = &history {
            let _ = editor.save_history(h);
        }
        Ok(())
    }
}

/// The shell command that a word people type at psql's or another shell's prompt stands for:
/// `exit`, `quit` and `\q` leave, `help`, `\?` and `\h` print the help, `\dt` and `\d` list
/// the tables, `\d TABLE` shows its `CREATE TABLE`; another psql command is an error that says
/// what to type. `None` for a line that is not one of these (it is SQL).
fn psql_word(line: &str) -> Option<Result<String>> {
    let line = line.trim().trim_end_matches(';').trim();
    let mut words = line.split_whitespace();
    let first = words.next()?;
    let rest: Vec<&str> = words.collect();
    let command = match (first.to_ascii_lowercase().as_str(), rest.as_slice()) {
        ("exit" | "quit" | "\\q", []) => ".quit".to_string(),
        ("help" | "\\?" | "\\h", _) => ".help".to_string(),
        ("\\dt" | "\\d" | "\\dt+" | "\\d+", []) => ".tables".to_string(),
        ("\\d" | "\\d+", [table]) => format!(".schema {table}"),
        (c, _) if c.starts_with('\\') => {
            return Some(Err(Error::invalid(format!(
                "{first} is a psql command; this shell's commands start with a dot (.tables, .schema TABLE, \
                 .quit): .help lists them"
            ))))
        }
        _ => return None,
    };
    Some(Ok(command))
}

/// Whether `varve sql` without a statement should open the interactive shell.
pub(crate) fn stdin_is_terminal() -> bool {
    std::io::stdin().is_terminal()
}

/// A `CREATE TABLE` statement that makes a table of `d`'s shape and contract.
fn create_statement(d: &varve::TableDescription) -> String {
    let columns: Vec<String> = d
        .schema
        .fields()
        .iter()
        .map(|f| format!("{} {}", quote(f.name()), varve::type_label(f.data_type())))
        .collect();
    let mut with = Vec::new();
    if let Some(t) = &d.contract.time_column {
        with.push(format!("time_column = '{t}'"));
        if !d.contract.series_key.is_empty() {
            with.push(format!("series_key = '{}'", d.contract.series_key.join(",")));
        }
        with.push(format!("partition = '{}'", d.contract.partitioning));
        if d.contract.dedup != varve::Dedup::None {
            with.push(format!("dedup = '{}'", d.contract.dedup));
        }
    }
    let with = if with.is_empty() {
        String::new()
    } else {
        format!(" WITH ({})", with.join(", "))
    };
    format!("CREATE TABLE {} ({}){with};", d.ident, columns.join(", "))
}

/// A column name as SQL needs it: bare when it is a plain lower-case identifier, else quoted.
fn quote(name: &str) -> String {
    let plain = name.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}
