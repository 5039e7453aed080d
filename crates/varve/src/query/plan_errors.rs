//! Plain errors for DataFusion's planning errors that would otherwise reach a user wrapped in
//! its internals: a function's own argument check ([`coercion_error`]) and a numeric function
//! given a text column ([`text_argument_error`]). The session (`session`) tries them on every
//! planning error before it passes DataFusion's own on.

use crate::error::Error;

/// The sentence of a function's own argument check (Varve's functions check their arguments in
/// `coerce_types`) out of DataFusion's wrapping of it ("Error during planning: Execution error:
/// Function 'last' user-defined coercion failed with: Error during planning: <sentence>. No
/// function matches ... Candidate functions: ..."); `None` for any other error.
pub(crate) fn coercion_error(message: &str) -> Option<Error> {
    const MARK: &str = "user-defined coercion failed with: ";
    let rest = &message[message.find(MARK)? + MARK.len()..];
    let rest = rest.strip_prefix("Error during planning: ").unwrap_or(rest);
    let sentence = rest.split(". No function matches").next().unwrap_or(rest).trim();
    Some(Error::invalid(sentence.to_string()))
}

/// DataFusion's planning error for a numeric function given text (`avg(isig)` where `isig` is
/// a text column: "Internal error: Function 'avg' failed to match any signature ... please file a
/// bug report") as a plain one naming the function and the column(s) passed to it in `sql`;
/// `None` for any other error.
pub(crate) fn text_argument_error(sql: &str, message: &str) -> Option<Error> {
    use std::ops::ControlFlow;

    use datafusion::sql::sqlparser::ast::{Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Visit, Visitor};
    use datafusion::sql::sqlparser::dialect::GenericDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    const MARK: &str = "No function matches the given name and argument types '";
    let start = message.find(MARK)? + MARK.len();
    let call = &message[start..start + message[start..].find('\'')?];
    let (function, types) = call.split_once('(')?;
    let types: Vec<&str> = types.trim_end_matches(')').split(',').map(str::trim).collect();
    if !types.iter().any(|t| matches!(*t, "Utf8" | "LargeUtf8" | "Utf8View")) {
        return None;
    }
    // The columns the statement passes to that function.
    struct Args<'a> {
        function: &'a str,
        columns: Vec<String>,
    }
    impl Visitor for Args<'_> {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            if let Expr::Function(f) = e {
                if f.name.to_string().eq_ignore_ascii_case(self.function) {
                    if let FunctionArguments::List(list) = &f.args {
                        for a in &list.args {
                            if let FunctionArg::Unnamed(FunctionArgExpr::Expr(x)) = a {
                                let name = match x {
                                    Expr::Identifier(i) => Some(i.value.clone()),
                                    Expr::CompoundIdentifier(p) => p.last().map(|i| i.value.clone()),
                                    _ => None,
                                };
                                if let Some(n) = name.filter(|n| !self.columns.contains(n)) {
                                    self.columns.push(n);
                                }
                            }
                        }
                    }
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut args = Args {
        function,
        columns: vec![],
    };
    if let Ok(statements) = Parser::parse_sql(&GenericDialect {}, sql) {
        for s in &statements {
            let _ = s.visit(&mut args);
        }
    }
    let what = match args.columns.as_slice() {
        [one] => format!("column {one} is text"),
        [] => "its argument is text".to_string(),
        many => format!("its argument is text (one of {})", many.join(", ")),
    };
    let example = args.columns.first().map(String::as_str).unwrap_or("x");
    Some(Error::invalid(format!(
        "{function} needs a number; {what}. Cast it ({function}(CAST({example} AS DOUBLE)) fails on values that are \
         not numbers), or, if the column became text on import because of a missing-value spelling such as nil, \
         import again with --null-value"
    )))
}
