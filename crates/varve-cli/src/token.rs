//! `varve token add|ls|revoke`: the token file of `varve serve --token-file`, which holds each
//! token's hash with its scope and namespace, never the token (`varve_server::Tokens`).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use varve_server::{Scope, Tokens};

#[derive(Debug, Args)]
pub(crate) struct TokenArgs {
    #[command(subcommand)]
    command: TokenCommand,
    #[command(flatten)]
    no_lake: NoLake,
}

/// Token files are not in a lake: hidden args that take the place of the global --lake and -o
/// (so `--help` does not offer them) and refuse them.
#[derive(Debug, Args)]
struct NoLake {
    #[arg(long, hide = true)]
    lake: Option<String>,
    #[arg(long = "storage-option", short = 'o', hide = true, value_name = "KEY=VALUE")]
    storage_options: Vec<String>,
}

impl NoLake {
    fn given(&self) -> bool {
        self.lake.is_some() || !self.storage_options.is_empty()
    }
}

#[derive(Debug, Subcommand)]
enum TokenCommand {
    /// Make a new random token: print it (once: only its hash is kept) and add its hash to the
    /// token file, which is made (readable by its owner only) when it does not exist.
    Add {
        /// The token file (`varve serve --token-file`).
        #[arg(long, value_name = "FILE")]
        token_file: PathBuf,
        /// read: queries that change nothing, table listings, metrics; write: also writes.
        #[arg(long, value_parser = ["read", "write"])]
        scope: String,
        /// Only tables of this namespace (default: every namespace); schema statements are refused.
        #[arg(long, value_name = "NS")]
        namespace: Option<String>,
        #[command(flatten)]
        no_lake: NoLake,
    },
    /// List the tokens of a token file: id, scope, namespace and when each was made.
    Ls {
        /// The token file.
        #[arg(long, value_name = "FILE")]
        token_file: PathBuf,
        #[command(flatten)]
        no_lake: NoLake,
    },
    /// Remove a token from the token file by its id (see `ls`); a running server accepts it until
    /// restarted.
    Revoke {
        /// The token file.
        #[arg(long, value_name = "FILE")]
        token_file: PathBuf,
        /// The token's id.
        id: String,
        #[command(flatten)]
        no_lake: NoLake,
    },
}

/// Runs `varve token ...`; `global_lake` says whether --lake or -o came before `token`.
pub(crate) fn run(args: TokenArgs, global_lake: bool) -> varve::Result<()> {
    let invalid = varve::Error::invalid;
    let nested = match &args.command {
        TokenCommand::Add { no_lake, .. } | TokenCommand::Ls { no_lake, .. } | TokenCommand::Revoke { no_lake, .. } => {
            no_lake.given()
        }
    };
    if global_lake || args.no_lake.given() || nested {
        return Err(invalid(
            "varve token works on a token file, not a lake: give --token-file FILE instead of --lake or -o".into(),
        ));
    }
    match args.command {
        TokenCommand::Add {
            token_file,
            scope,
            namespace,
            ..
        } => {
            let scope = Scope::parse(&scope).map_err(invalid)?;
            let (token, entry) = varve_server::new_token(scope, namespace.as_deref()).map_err(invalid)?;
            varve_server::add_to_file(&token_file, &entry).map_err(invalid)?;
            println!("{token}");
            eprintln!(
                "added token {} ({}, namespace {}) to {}; the token is shown only now",
                entry.id,
                entry.scope.as_str(),
                entry.namespace.as_deref().unwrap_or("*"),
                token_file.display()
            );
            Ok(())
        }
        TokenCommand::Ls { token_file, .. } => {
            let text = std::fs::read_to_string(&token_file)
                .map_err(|e| varve::Error::not_found(format!("token file {}: {e}", token_file.display())))?;
            let tokens =
                Tokens::parse(&text).map_err(|e| invalid(format!("token file {}: {e}", token_file.display())))?;
            if tokens.entries().is_empty() {
                eprintln!("no tokens in {}", token_file.display());
                return Ok(());
            }
            println!("{:<12}  {:<5}  {:<16}  created", "id", "scope", "namespace");
            for e in tokens.entries() {
                println!(
                    "{:<12}  {:<5}  {:<16}  {}",
                    e.id,
                    e.scope.as_str(),
                    e.namespace.as_deref().unwrap_or("*"),
                    e.created
                );
            }
            Ok(())
        }
        TokenCommand::Revoke { token_file, id, .. } => {
            let e = varve_server::revoke_in_file(&token_file, &id).map_err(invalid)?;
            println!(
                "revoked token {} ({}, namespace {}); restart servers that read {}",
                e.id,
                e.scope.as_str(),
                e.namespace.as_deref().unwrap_or("*"),
                token_file.display()
            );
            Ok(())
        }
    }
}
