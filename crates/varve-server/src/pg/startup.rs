//! A PostgreSQL connection's login: SCRAM-SHA-256 with a token of the server's token file as the
//! password and any user and database name (`scram`); no password when the server has no token
//! file; user `anonymous` without a password reads when the server allows anonymous reads. After
//! it, the parameters every client is told (`server_version`, `DateStyle`, ...) and the key a
//! client cancels its queries with.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use futures::{Sink, SinkExt};
use pgwire::api::auth::{
    finish_authentication, protocol_negotiation, save_startup_parameters_to_metadata, ServerParameterProvider,
    StartupHandler,
};
use pgwire::api::{ClientInfo, PgWireConnectionState, PidSecretKeyGenerator, METADATA_APPLICATION_NAME, METADATA_USER};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use pgwire::messages::startup::Authentication;
use pgwire::messages::{PgWireBackendMessage, PgWireFrontendMessage};

use super::catalog;
use super::conn::PgConn;
use crate::auth::{Grant, Scope};
use crate::scram::{Exchange, MECHANISM};

/// The user name that logs in without a password when the server allows anonymous reads.
pub(crate) const ANONYMOUS: &str = "anonymous";

/// Where a login is.
#[derive(Debug)]
enum Step {
    /// Before the startup message.
    Start,
    /// SCRAM offered; waiting for the client's first message.
    Offered,
    /// The server's first message sent; waiting for the client's proof.
    Challenged(Exchange),
}

/// One connection's login.
pub(crate) struct Startup {
    pub(crate) conn: Arc<PgConn>,
    pub(crate) cancels: Arc<super::cancel::Cancels>,
    pub(crate) keys: Arc<dyn PidSecretKeyGenerator>,
    step: tokio::sync::Mutex<Step>,
}

impl Startup {
    pub(crate) fn new(
        conn: Arc<PgConn>,
        cancels: Arc<super::cancel::Cancels>,
        keys: Arc<dyn PidSecretKeyGenerator>,
    ) -> Startup {
        Startup {
            conn,
            cancels,
            keys,
            step: tokio::sync::Mutex::new(Step::Start),
        }
    }

    /// Logs the client in with `grant`: its cancel key, the parameters, ReadyForQuery.
    async fn admit<C>(&self, client: &mut C, grant: Grant) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send,
        C::Error: std::fmt::Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let namespace = grant.namespace.clone();
        if let Some(ns) = &namespace {
            self.conn.session.scope_suggestions(ns);
        }
        if let Ok(mut g) = self.conn.grant.lock() {
            *g = grant;
        }
        self.conn
            .shared
            .install(&self.conn.session, self.conn.app.0.lake.clone(), namespace);
        let (pid, secret) = self.keys.generate(client);
        client.set_pid_and_secret_key(pid, secret.clone());
        let registered = self.cancels.register(pid, &secret, &self.conn);
        client.session_extensions().insert(registered);
        finish_authentication(client, &Parameters).await
    }
}

/// A failed login: FATAL, SQLSTATE 28P01 (invalid_password).
fn denied(message: impl Into<String>) -> PgWireError {
    PgWireError::UserError(Box::new(ErrorInfo::new("FATAL".into(), "28P01".into(), message.into())))
}

#[async_trait::async_trait]
impl StartupHandler for Startup {
    async fn on_startup<C>(&self, client: &mut C, message: PgWireFrontendMessage) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send,
        C::Error: std::fmt::Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let config = &self.conn.app.0.config;
        match message {
            PgWireFrontendMessage::Startup(ref startup) => {
                protocol_negotiation(client, startup).await?;
                save_startup_parameters_to_metadata(client, startup);
                if config.tls.is_some() && !client.is_secure() {
                    return Err(PgWireError::UserError(Box::new(ErrorInfo::new(
                        "FATAL".into(),
                        "28000".into(),
                        "this server takes TLS connections only: connect with sslmode=require (or verify-full)".into(),
                    ))));
                }
                let user = client.metadata().get(METADATA_USER).cloned().unwrap_or_default();
                match &config.tokens {
                    None => {
                        let grant = Grant {
                            scope: Some(Scope::Write),
                            namespace: None,
                            token: false,
                            rejected: false,
                        };
                        return self.admit(client, grant).await;
                    }
                    Some(_) if config.allow_anonymous_read && user == ANONYMOUS => {
                        let grant = Grant {
                            scope: Some(Scope::Read),
                            namespace: None,
                            token: false,
                            rejected: false,
                        };
                        return self.admit(client, grant).await;
                    }
                    Some(_) => {
                        client.set_state(PgWireConnectionState::AuthenticationInProgress);
                        client
                            .send(PgWireBackendMessage::Authentication(Authentication::SASL(vec![
                                MECHANISM.to_string(),
                            ])))
                            .await?;
                        *self.step.lock().await = Step::Offered;
                    }
                }
            }
            PgWireFrontendMessage::PasswordMessageFamily(msg) => {
                let mut step = self.step.lock().await;
                match std::mem::replace(&mut *step, Step::Start) {
                    Step::Offered => {
                        let first = msg.into_sasl_initial_response()?;
                        if first.auth_method != MECHANISM {
                            return Err(denied(format!(
                                "authentication method {} is not offered: use {MECHANISM}",
                                first.auth_method
                            )));
                        }
                        let data = first.data.unwrap_or_default();
                        let exchange = Exchange::start(&data).map_err(denied)?;
                        client
                            .send(PgWireBackendMessage::Authentication(Authentication::SASLContinue(
                                Bytes::from(exchange.server_first().to_string()),
                            )))
                            .await?;
                        *step = Step::Challenged(exchange);
                    }
                    Step::Challenged(exchange) => {
                        let last = msg.into_sasl_response()?;
                        let Some(tokens) = &config.tokens else {
                            return Err(denied("the server has no token file"));
                        };
                        let (entry, server_final) =
                            exchange.finish(&last.data, tokens.scram_entries()).map_err(denied)?;
                        let grant = Grant::of(entry);
                        client
                            .send(PgWireBackendMessage::Authentication(Authentication::SASLFinal(
                                Bytes::from(server_final),
                            )))
                            .await?;
                        drop(step);
                        return self.admit(client, grant).await;
                    }
                    Step::Start => return Err(denied("a password message before the startup message")),
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// The parameters every client is told at login.
struct Parameters;

impl ServerParameterProvider for Parameters {
    fn server_parameters<C>(&self, client: &C) -> Option<HashMap<String, String>>
    where
        C: ClientInfo,
    {
        let m = client.metadata();
        Some(catalog::reported_parameters(
            m.get(METADATA_USER).map(String::as_str),
            m.get(METADATA_APPLICATION_NAME).map(String::as_str),
        ))
    }
}
