//! Named arguments of `time_bucket` (`origin => ...`, `"offset" => ...`, `timezone => ...`),
//! TimescaleDB's spelling. DataFusion matches named arguments to a function's parameters only
//! as a prefix of them (a name may not skip a parameter), and `time_bucket`'s optional ones are
//! each used alone; so before planning, a call with names is rewritten in the parsed statement to
//! the positional form `time_bucket(width, ts, timezone, origin, offset)`, a skipped parameter
//! given as NULL (its default).

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    visit_expressions_mut, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Statement, Value,
};

use super::{NAME, PARAMETERS};
use crate::error::{Error, Result};

/// Rewrites every `time_bucket` call with named arguments in `statement` to positional form.
///
/// Errors: [`crate::ErrorKind::InvalidInput`] for an unknown or repeated name, or a positional
/// argument after a named one.
pub(crate) fn named_arguments(statement: &mut Statement) -> Result<()> {
    let flow = visit_expressions_mut(statement, |e| match e {
        Expr::Function(f)
            if f.name
                .0
                .last()
                .and_then(|p| p.as_ident())
                .is_some_and(|i| i.value.eq_ignore_ascii_case(NAME)) =>
        {
            match &mut f.args {
                FunctionArguments::List(list) => match positional(std::mem::take(&mut list.args)) {
                    Ok(args) => {
                        list.args = args;
                        ControlFlow::Continue(())
                    }
                    Err(e) => ControlFlow::Break(e),
                },
                _ => ControlFlow::Continue(()),
            }
        }
        _ => ControlFlow::Continue(()),
    });
    match flow {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(()),
    }
}

fn positional(args: Vec<FunctionArg>) -> Result<Vec<FunctionArg>> {
    if args.iter().all(|a| matches!(a, FunctionArg::Unnamed(_))) {
        return Ok(args);
    }
    let mut slots: Vec<Option<FunctionArgExpr>> = vec![None; PARAMETERS.len()];
    let mut seen_named = false;
    for (i, arg) in args.into_iter().enumerate() {
        let (name, value) = match arg {
            FunctionArg::Unnamed(value) => {
                if seen_named {
                    return Err(Error::invalid(format!(
                        "{NAME}: argument {} has no name but follows a named one; put positional arguments first",
                        i + 1
                    )));
                }
                if i >= PARAMETERS.len() {
                    return Err(Error::invalid(format!(
                        "{NAME} takes at most {} arguments",
                        PARAMETERS.len()
                    )));
                }
                slots[i] = Some(value);
                continue;
            }
            FunctionArg::Named { name, arg, .. } => (name.value, arg),
            FunctionArg::ExprNamed {
                name: Expr::Identifier(name),
                arg,
                ..
            } => (name.value, arg),
            FunctionArg::ExprNamed { name, .. } => {
                return Err(Error::invalid(format!("{NAME}: {name} is not an argument name")));
            }
        };
        seen_named = true;
        let Some(at) = PARAMETERS.iter().position(|p| p.eq_ignore_ascii_case(&name)) else {
            return Err(Error::invalid(format!(
                "{NAME}: no argument is named {name}; its arguments are {}",
                PARAMETERS.join(", ")
            )));
        };
        if slots[at].replace(value).is_some() {
            return Err(Error::invalid(format!("{NAME}: argument {name} is given twice")));
        }
    }
    if let Some(missing) = (0..2).find(|i| slots[*i].is_none()) {
        return Err(Error::invalid(format!(
            "{NAME}: argument {} is missing",
            PARAMETERS[missing]
        )));
    }
    let used = slots.iter().rposition(|s| s.is_some()).map_or(0, |i| i + 1);
    Ok(slots
        .into_iter()
        .take(used)
        .map(|s| FunctionArg::Unnamed(s.unwrap_or_else(|| FunctionArgExpr::Expr(Expr::Value(Value::Null.into())))))
        .collect())
}
