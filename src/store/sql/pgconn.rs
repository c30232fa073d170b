//! One PostgreSQL connection behind a synchronous door: a thread owns the connection and its
//! own small runtime, and callers — plain threads, the store's writer thread, or a task on
//! another runtime — hand it statements and wait for the answer. (The store's API is
//! synchronous, as SQLite's is; blocking on another runtime from inside a tokio task would
//! panic, waiting on a channel does not.) Prepared statements are kept per SQL text;
//! LISTEN/NOTIFY payloads arrive on [`PgConn::notices`].

use std::collections::HashMap;
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use tokio_postgres::{AsyncMessage, Client, Statement};

use super::{DbError, Row, Value};
use crate::store::pg;
use crate::store::target::PgUrl;

/// A notification from `LISTEN`: (channel, payload).
pub type Notice = (String, String);

enum Op {
    /// Statements with parameters: the rows (for a query) or the rows changed.
    Query(String, Vec<Value>),
    Execute(String, Vec<Value>),
    /// Plain SQL, several statements, no parameters (BEGIN, COMMIT, LISTEN…).
    Batch(String),
}

enum Answer {
    Rows(Vec<Row>),
    Count(u64),
    Done,
}

type Job = (Op, std_mpsc::Sender<Result<Answer, DbError>>);

/// A connection's door. Cloning is not offered: one store, one connection, one order.
pub struct PgConn {
    jobs: mpsc::UnboundedSender<Job>,
    /// Inside a transaction this door began ([`PgConn::begin`] until [`PgConn::end`]).
    in_tx: std::sync::atomic::AtomicBool,
    notices: Arc<Mutex<std_mpsc::Receiver<Notice>>>,
}

impl PgConn {
    /// Connects (in the connection's own thread) and waits until it is up.
    pub fn connect(url: &PgUrl) -> Result<PgConn, DbError> {
        let shown = url.shown().to_string();
        let config = pg::config(url.raw()).map_err(|m| unusable(&shown, m))?;
        let (jobs, rx) = mpsc::unbounded_channel::<Job>();
        let (up_tx, up_rx) = std_mpsc::channel();
        let (note_tx, note_rx) = std_mpsc::channel();
        let who = shown.clone();
        std::thread::Builder::new()
            .name("kakeai-pg".into())
            .spawn(move || serve(config, rx, up_tx, note_tx, who))
            .map_err(|e| unusable(&shown, e))?;
        match up_rx.recv() {
            Ok(Ok(())) => Ok(PgConn {
                jobs,
                in_tx: std::sync::atomic::AtomicBool::new(false),
                notices: Arc::new(Mutex::new(note_rx)),
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(unusable(&shown, "its connection thread stopped")),
        }
    }

    fn ask(&self, op: Op) -> Result<Answer, DbError> {
        let (tx, rx) = std_mpsc::channel();
        self.jobs.send((op, tx)).map_err(|_| DbError::Closed)?;
        rx.recv().map_err(|_| DbError::Closed)?
    }

    pub fn query(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        match self.ask(Op::Query(sql.to_string(), params.to_vec()))? {
            Answer::Rows(r) => Ok(r),
            _ => Err(DbError::Closed),
        }
    }

    pub fn execute(&self, sql: &str, params: &[Value]) -> Result<usize, DbError> {
        match self.ask(Op::Execute(sql.to_string(), params.to_vec()))? {
            Answer::Count(n) => Ok(n as usize),
            _ => Err(DbError::Closed),
        }
    }

    pub fn batch(&self, sql: &str) -> Result<(), DbError> {
        self.ask(Op::Batch(sql.to_string())).map(|_| ())
    }

    /// Begins a transaction (`BEGIN …`).
    pub fn begin(&self, sql: &str) -> Result<(), DbError> {
        self.batch(sql)?;
        self.in_tx.store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    /// Ends the transaction (`COMMIT` or `ROLLBACK`); it is over even when this fails.
    pub fn end(&self, sql: &str) -> Result<(), DbError> {
        let r = self.batch(sql);
        self.in_tx.store(false, std::sync::atomic::Ordering::SeqCst);
        r
    }

    /// True between [`PgConn::begin`] and [`PgConn::end`]: a write nests in a savepoint.
    pub fn in_transaction(&self) -> bool {
        self.in_tx.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Notifications received so far (after `LISTEN channel`), without waiting.
    pub fn notices(&self) -> Vec<Notice> {
        let rx = self.notices.lock().unwrap_or_else(|p| p.into_inner());
        rx.try_iter().collect()
    }
}

/// A connection that cannot be had: the URL (password hidden), then why.
fn unusable(shown: &str, why: impl std::fmt::Display) -> DbError {
    DbError::Connect(format!(
        "{shown}: cannot use this PostgreSQL database: {why}"
    ))
}

/// The connection thread: connect, then answer jobs in order until every door is dropped.
fn serve(
    config: tokio_postgres::Config,
    mut rx: mpsc::UnboundedReceiver<Job>,
    up: std_mpsc::Sender<Result<(), DbError>>,
    notes: std_mpsc::Sender<Notice>,
    shown: String,
) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = up.send(Err(unusable(&shown, e)));
            return;
        }
    };
    rt.block_on(async move {
        let client = match connect(&config, notes).await {
            Ok(c) => c,
            Err(e) => {
                let _ = up.send(Err(unusable(&shown, e)));
                return;
            }
        };
        let _ = up.send(Ok(()));
        let mut cache: HashMap<String, Statement> = HashMap::new();
        while let Some((op, reply)) = rx.recv().await {
            let _ = reply.send(run(&client, &mut cache, op).await);
        }
    });
}

/// Connects with or without TLS as the URL's `sslmode` says, and drives the connection in a
/// task that forwards notifications.
async fn connect(
    config: &tokio_postgres::Config,
    notes: std_mpsc::Sender<Notice>,
) -> Result<Client, String> {
    use tokio_postgres::config::SslMode;
    let client = match config.get_ssl_mode() {
        SslMode::Disable => {
            let (c, conn) = config
                .connect(tokio_postgres::NoTls)
                .await
                .map_err(|e| pg::with_fix(&e))?;
            tokio::spawn(drive(conn, notes));
            c
        }
        _ => {
            let (c, conn) = config
                .connect(pg::tls())
                .await
                .map_err(|e| pg::with_fix(&e))?;
            tokio::spawn(drive(conn, notes));
            c
        }
    };
    Ok(client)
}

/// Polls the connection until it ends, passing notifications on.
async fn drive<S, T>(mut conn: tokio_postgres::Connection<S, T>, notes: std_mpsc::Sender<Notice>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    T: tokio_postgres::tls::TlsStream + Unpin,
{
    loop {
        let next = std::future::poll_fn(|cx| conn.poll_message(cx)).await;
        match next {
            Some(Ok(AsyncMessage::Notification(n))) => {
                let _ = notes.send((n.channel().to_string(), n.payload().to_string()));
            }
            Some(Ok(_)) => {}
            Some(Err(_)) | None => return,
        }
    }
}

async fn run(
    client: &Client,
    cache: &mut HashMap<String, Statement>,
    op: Op,
) -> Result<Answer, DbError> {
    match op {
        Op::Batch(sql) => {
            client.batch_execute(&sql).await.map_err(DbError::from)?;
            Ok(Answer::Done)
        }
        Op::Query(sql, params) => {
            let st = statement(client, cache, &sql).await?;
            let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
                params.iter().map(|v| v as _).collect();
            let rows = client.query(&st, &refs).await.map_err(DbError::from)?;
            let names: Arc<[String]> = st.columns().iter().map(|c| c.name().to_string()).collect();
            let mut out = Vec::with_capacity(rows.len());
            for r in rows {
                let values = (0..r.len())
                    .map(|i| r.try_get::<_, Value>(i))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(DbError::from)?;
                out.push(Row {
                    names: names.clone(),
                    values,
                });
            }
            Ok(Answer::Rows(out))
        }
        Op::Execute(sql, params) => {
            let st = statement(client, cache, &sql).await?;
            let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
                params.iter().map(|v| v as _).collect();
            let n = client.execute(&st, &refs).await.map_err(DbError::from)?;
            Ok(Answer::Count(n))
        }
    }
}

/// The prepared statement for `sql` (SQLite's `?N` placeholders as `$N`), kept for reuse.
async fn statement(
    client: &Client,
    cache: &mut HashMap<String, Statement>,
    sql: &str,
) -> Result<Statement, DbError> {
    if let Some(st) = cache.get(sql) {
        return Ok(st.clone());
    }
    let st = client
        .prepare(&super::dialect::placeholders(sql))
        .await
        .map_err(DbError::from)?;
    if cache.len() > 512 {
        cache.clear();
    }
    cache.insert(sql.to_string(), st.clone());
    Ok(st)
}
