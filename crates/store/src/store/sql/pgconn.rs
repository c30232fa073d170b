//! One PostgreSQL connection behind a synchronous door: a thread owns the connection and its
//! own small runtime, and callers — plain threads, the store's writer thread, or a task on
//! another runtime — hand it statements and wait for the answer. (The store's API is
//! synchronous, as SQLite's is; blocking on another runtime from inside a tokio task would
//! panic, waiting on a channel does not.) Prepared statements are kept per SQL text;
//! LISTEN/NOTIFY payloads arrive on [`PgConn::notices`].
//!
//! # A connection that is lost comes back
//!
//! A server restart, a crash or a network cut closes the connection; the next statement
//! connects again (bounded by the connect timeout; after a try that failed slowly the next
//! waits [`QUIET`], failing at once meanwhile; a refusal is tried again at once), prepares its statements anew and re-issues every
//! `LISTEN` ([`PgConn::reconnects`] counts the returns, so a watcher knows it was away). A
//! statement waits at most the server's statement timeout and a margin for an answer
//! (`pg::answer_bound`); a server that stays silent longer is given up like a lost one.
//!
//! Inside a transaction nothing is ever continued on a new connection: once its connection is
//! lost every further statement of it fails until it ends, and ending it says whether it was
//! lost uncommitted ([`PgConn::rollback`]) — safe to run again from the start. A COMMIT whose
//! answer was lost is resolved by asking the new connection about the transaction's id
//! (`txid_status`, noted at BEGIN with the server's era): committed is a success only when the
//! server has not restarted since BEGIN, aborted is "lost uncommitted", and when nobody can
//! tell within [`RESOLVE`] it is an error saying so (never a success; see [`super::resolve`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_postgres::{AsyncMessage, Client, SimpleQueryMessage, Statement};

use super::resolve::{self, Status, Verdict};
use super::{DbError, Row, Value};
use crate::store::pg;
use crate::store::target::PgUrl;

/// A notification from `LISTEN`: (channel, payload).
pub type Notice = (String, String);

/// After a connection attempt that failed slowly (at least [`SLOW_FAILURE`]: a server that
/// does not answer), how long statements fail at once before the next try.
pub const QUIET: Duration = Duration::from_millis(500);
/// A failed attempt that took this long counts as slow.
pub const SLOW_FAILURE: Duration = Duration::from_secs(1);
/// How long a COMMIT whose answer was lost is asked about before its outcome counts as unknown.
pub const RESOLVE: Duration = Duration::from_secs(5);

enum Op {
    /// Statements with parameters: the rows (for a query) or the rows changed.
    Query(String, Vec<Value>),
    Execute(String, Vec<Value>),
    /// Plain SQL, several statements, no parameters (LISTEN, SET…).
    Batch(String),
    /// `BEGIN …`: the transaction's id is noted with it.
    Begin(String),
    /// `COMMIT` or `ROLLBACK`.
    End(String),
    /// `LISTEN channel`, issued again on every new connection.
    Listen(String),
}

enum Answer {
    Rows(Vec<Row>),
    Count(u64),
    Done,
    /// A transaction began, with its id when the server said.
    Begun(Option<Began>),
    /// A transaction ended: whether its connection was lost before anything committed.
    Ended {
        lost: bool,
    },
}

type Job = (Op, std_mpsc::Sender<Result<Answer, DbError>>);

/// A connection's door. Cloning is not offered: one store, one connection, one order.
pub struct PgConn {
    jobs: mpsc::UnboundedSender<Job>,
    /// Inside a transaction this door began ([`PgConn::begin`] until [`PgConn::end`]).
    in_tx: AtomicBool,
    notices: Arc<Mutex<std_mpsc::Receiver<Notice>>>,
    reconnects: Arc<AtomicU64>,
}

impl PgConn {
    /// Connects (in the connection's own thread) and waits until it is up.
    pub fn connect(url: &PgUrl) -> Result<PgConn, DbError> {
        let shown = url.shown().to_string();
        let config = pg::config(url.raw()).map_err(|m| unusable(&shown, m))?;
        let (jobs, rx) = mpsc::unbounded_channel::<Job>();
        let (up_tx, up_rx) = std_mpsc::channel();
        let (note_tx, note_rx) = std_mpsc::channel();
        let reconnects = Arc::new(AtomicU64::new(0));
        let link = Link {
            bound: pg::answer_bound(&config),
            config,
            notes: note_tx,
            client: None,
            cache: HashMap::new(),
            listening: Vec::new(),
            tx: Tx::Idle,
            reconnects: reconnects.clone(),
            quiet: None,
            era: NO_ERA,
        };
        std::thread::Builder::new()
            .name("kakeai-pg".into())
            .spawn(move || serve(link, rx, up_tx, shown))
            .map_err(|e| unusable(url.shown(), e))?;
        match up_rx.recv() {
            Ok(Ok(())) => Ok(PgConn {
                jobs,
                in_tx: AtomicBool::new(false),
                notices: Arc::new(Mutex::new(note_rx)),
                reconnects,
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(unusable(url.shown(), "its connection thread stopped")),
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

    /// `LISTEN channel`, now and on every connection made after a loss.
    pub fn listen(&self, channel: &str) -> Result<(), DbError> {
        self.ask(Op::Listen(channel.to_string())).map(|_| ())
    }

    /// Begins a transaction (`BEGIN …`).
    pub fn begin(&self, sql: &str) -> Result<(), DbError> {
        self.in_tx.store(true, Ordering::SeqCst);
        match self.ask(Op::Begin(sql.to_string())) {
            Ok(_) => Ok(()),
            Err(e) => {
                self.in_tx.store(false, Ordering::SeqCst);
                Err(e)
            }
        }
    }

    /// Ends the transaction (`COMMIT` or `ROLLBACK`); it is over even when this fails.
    pub fn end(&self, sql: &str) -> Result<(), DbError> {
        let r = self.ask(Op::End(sql.to_string()));
        self.in_tx.store(false, Ordering::SeqCst);
        r.map(|_| ())
    }

    /// Rolls the transaction back; true when its connection had been lost before anything of
    /// it committed (running it again from the start is safe).
    pub fn rollback(&self) -> bool {
        let r = self.ask(Op::End("ROLLBACK".into()));
        self.in_tx.store(false, Ordering::SeqCst);
        matches!(r, Ok(Answer::Ended { lost: true }))
    }

    /// True between [`PgConn::begin`] and [`PgConn::end`]: a write nests in a savepoint.
    pub fn in_transaction(&self) -> bool {
        self.in_tx.load(Ordering::SeqCst)
    }

    /// Notifications received so far (after `LISTEN channel`), without waiting.
    pub fn notices(&self) -> Vec<Notice> {
        let rx = self.notices.lock().unwrap_or_else(|p| p.into_inner());
        rx.try_iter().collect()
    }

    /// How many times the connection was made again after a loss.
    pub fn reconnects(&self) -> u64 {
        self.reconnects.load(Ordering::SeqCst)
    }
}

/// A connection that cannot be had: the URL (password hidden), then why.
fn unusable(shown: &str, why: impl std::fmt::Display) -> DbError {
    DbError::Connect(format!(
        "{shown}: cannot use this PostgreSQL database: {why}"
    ))
}

/// A connection lost; `unsure`: a COMMIT's outcome could not be learned.
fn lost(message: impl Into<String>, unsure: bool) -> DbError {
    DbError::Lost {
        message: message.into(),
        unsure,
    }
}

/// A transaction's id and the server's era when it began (see [`super::resolve`]).
#[derive(Debug, Clone, PartialEq)]
struct Began {
    xid: i64,
    era: Option<String>,
}

/// Where the door's transaction stands, as the connection thread sees it.
#[derive(Debug, Clone, PartialEq)]
enum Tx {
    Idle,
    /// Begun; its id when the server said.
    Open(Option<Began>),
    /// Its connection was lost: nothing of it committed, nothing more of it runs.
    Lost,
}

/// The connection thread's state.
struct Link {
    config: tokio_postgres::Config,
    notes: std_mpsc::Sender<Notice>,
    client: Option<Client>,
    cache: HashMap<String, Statement>,
    listening: Vec<String>,
    tx: Tx,
    reconnects: Arc<AtomicU64>,
    /// After a failed try: no new one before this instant, and why it failed.
    quiet: Option<(Instant, String)>,
    /// How long an answer may take (see `pg::answer_bound`).
    bound: Option<Duration>,
    /// The SQL reading the server's era on this connection (see [`era_sql`]).
    era: &'static str,
}

/// The connection thread: connect, then answer jobs in order until every door is dropped.
fn serve(
    mut link: Link,
    mut rx: mpsc::UnboundedReceiver<Job>,
    up: std_mpsc::Sender<Result<(), DbError>>,
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
        match connect(&link.config, link.notes.clone()).await {
            Ok(c) => {
                link.era = era_sql(&c, link.bound).await;
                link.client = Some(c);
            }
            Err(e) => {
                let _ = up.send(Err(unusable(&shown, e)));
                return;
            }
        }
        let _ = up.send(Ok(()));
        while let Some((op, reply)) = rx.recv().await {
            let _ = reply.send(link.handle(op).await);
        }
    });
}

impl Link {
    async fn handle(&mut self, op: Op) -> Result<Answer, DbError> {
        match op {
            Op::End(sql) => self.end(&sql).await,
            Op::Listen(channel) => {
                if !self.listening.contains(&channel) {
                    self.listening.push(channel.clone());
                }
                self.step(Op::Batch(format!("LISTEN {channel}"))).await
            }
            op => self.step(op).await,
        }
    }

    /// The connection, made again when it was lost (never inside a transaction).
    async fn ensure(&mut self) -> Result<(), DbError> {
        if self.client.as_ref().is_some_and(|c| !c.is_closed()) {
            return Ok(());
        }
        self.client = None;
        self.cache.clear();
        if let Some((until, why)) = &self.quiet
            && Instant::now() < *until
        {
            return Err(lost(format!("{UNREACHABLE}: {why}"), false));
        }
        let started = Instant::now();
        let made = match connect(&self.config, self.notes.clone()).await {
            Ok(c) => self.relisten(c).await,
            Err(e) => Err(e),
        };
        // Only a slow failure (a server that does not answer) makes the next statements fail
        // at once for a while; a refusal is cheap to try again, and trying again at once is
        // what makes the store usable the moment the server is back.
        let slow = started.elapsed() >= SLOW_FAILURE;
        match made {
            Ok(c) => {
                self.era = era_sql(&c, self.bound).await;
                self.client = Some(c);
                self.quiet = None;
                self.reconnects.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }
            Err(e) => {
                let message = format!("{UNREACHABLE}: {e}");
                self.quiet = slow.then(|| (Instant::now() + QUIET, e));
                Err(lost(message, false))
            }
        }
    }

    async fn relisten(&self, c: Client) -> Result<Client, String> {
        for channel in &self.listening {
            c.batch_execute(&format!("LISTEN {channel}"))
                .await
                .map_err(|e| pg::with_fix(&e))?;
        }
        Ok(c)
    }

    /// Runs one statement on the connection, telling a lost connection from a failed
    /// statement.
    async fn step(&mut self, op: Op) -> Result<Answer, DbError> {
        let begins = matches!(op, Op::Begin(_));
        match self.tx {
            Tx::Lost => return Err(lost(LOST_IN_TX, false)),
            Tx::Open(_) if self.client.as_ref().is_none_or(|c| c.is_closed()) => {
                self.tx = Tx::Lost;
                return Err(lost(LOST_IN_TX, false));
            }
            Tx::Open(_) => {}
            Tx::Idle => self.ensure().await?,
        }
        let Some(client) = self.client.as_ref() else {
            return Err(DbError::Closed);
        };
        let ran = within(self.bound, run(client, &mut self.cache, op, self.era)).await;
        // 57P01–57P03: the server is ending this session (shutdown, crash, terminated).
        let ending =
            matches!(&ran, Some(Err(DbError::Pg { code: Some(c), .. })) if c.starts_with("57P"));
        let broken = ran.is_none() || ending || client.is_closed();
        let r = ran.unwrap_or_else(|| Err(lost("no answer within the statement timeout", false)));
        match r {
            Err(e) if broken => {
                // Dropped: a session the server is ending is never used again.
                self.client = None;
                let in_tx = begins || matches!(self.tx, Tx::Open(_));
                if in_tx {
                    self.tx = Tx::Lost;
                }
                let tail = if in_tx {
                    "; nothing of this write was committed"
                } else {
                    ""
                };
                Err(lost(format!("{LOST} ({e}){tail}"), false))
            }
            Ok(Answer::Begun(began)) => {
                self.tx = Tx::Open(began);
                Ok(Answer::Done)
            }
            r => r,
        }
    }

    /// Ends the transaction; a COMMIT whose answer was lost is resolved (see the module doc).
    async fn end(&mut self, sql: &str) -> Result<Answer, DbError> {
        let commit = sql.trim().eq_ignore_ascii_case("COMMIT");
        match std::mem::replace(&mut self.tx, Tx::Idle) {
            Tx::Lost if commit => {
                self.tx = Tx::Lost;
                Err(lost(LOST_IN_TX, false))
            }
            Tx::Lost => Ok(Answer::Ended { lost: true }),
            Tx::Idle => {
                // Nothing begun here (a BEGIN that failed): a ROLLBACK only warns.
                if let Some(c) = self.client.as_ref().filter(|c| !c.is_closed()) {
                    let _ = within(self.bound, c.batch_execute(sql)).await;
                }
                Ok(Answer::Ended { lost: false })
            }
            Tx::Open(began) => {
                let ran = match self.client.as_ref() {
                    Some(c) => {
                        let ran = within(self.bound, c.batch_execute(sql)).await;
                        (!c.is_closed()).then_some(ran).flatten()
                    }
                    None => None,
                };
                match ran {
                    Some(Ok(())) if commit => Ok(Answer::Done),
                    Some(Ok(())) => Ok(Answer::Ended { lost: false }),
                    Some(Err(e)) if commit => Err(DbError::from(e)),
                    Some(Err(_)) => Ok(Answer::Ended { lost: false }),
                    None => {
                        self.client = None;
                        if commit {
                            self.resolve(began).await
                        } else {
                            Ok(Answer::Ended { lost: true })
                        }
                    }
                }
            }
        }
    }

    /// What became of a transaction whose COMMIT was sent and whose answer was lost, asked on a
    /// new connection for at most [`RESOLVE`] (see [`super::resolve`]). Only a committed
    /// status from the same server era is a success: a server restarted in between may have
    /// handed our id (and our rows' ids) to another transaction.
    async fn resolve(&mut self, began: Option<Began>) -> Result<Answer, DbError> {
        let unknown = || {
            lost(
                "the connection to PostgreSQL was lost during COMMIT and whether the write \
                 committed could not be learned; it is not acknowledged",
                true,
            )
        };
        let Some(began) = began else {
            return Err(unknown());
        };
        let until = Instant::now() + RESOLVE;
        while Instant::now() < until {
            if !matches!(
                tokio::time::timeout_at(until, self.ensure()).await,
                Ok(Ok(()))
            ) {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
            let Some(c) = self.client.as_ref() else {
                continue;
            };
            let sql = format!("SELECT txid_status({})::text, {}", began.xid, self.era);
            let (status, era) = match within(self.bound, c.simple_query(&sql)).await {
                Some(Ok(m)) => {
                    let [status, era] = texts(&m);
                    (Status::parse(status.as_deref()), era)
                }
                // An id the server never handed out (a crash lost it).
                Some(Err(e))
                    if e.as_db_error()
                        .is_some_and(|d| d.message().contains("in the future")) =>
                {
                    (Some(Status::Future), None)
                }
                _ => (None, None),
            };
            let same = resolve::same_era(began.era.as_deref(), era.as_deref());
            match status.map(|s| resolve::verdict(s, same)) {
                Some(Verdict::Committed) => return Ok(Answer::Done),
                Some(Verdict::NotCommitted) => {
                    self.tx = Tx::Lost;
                    return Err(lost(LOST_IN_TX, false));
                }
                Some(Verdict::Unknown) => return Err(unknown()),
                // Still in progress (its old session has not ended yet), or no answer.
                Some(Verdict::AskAgain) | None => {
                    tokio::time::sleep(Duration::from_millis(100)).await
                }
            }
        }
        Err(unknown())
    }
}

/// The era SQL when the role cannot read the last checkpoint: none (see [`super::resolve`]).
const NO_ERA: &str = "NULL::text";
/// The server's era: when its postmaster started and where its last checkpoint is.
const ERA: &str = "pg_postmaster_start_time()::text || ' ' || \
                   (SELECT checkpoint_lsn::text FROM pg_control_checkpoint())";

/// The era SQL this connection can run (asked once per connection: a role denied
/// `pg_control_checkpoint` must not fail every BEGIN), waiting at most `bound`.
async fn era_sql(c: &Client, bound: Option<Duration>) -> &'static str {
    match within(bound, c.simple_query(&format!("SELECT {ERA}"))).await {
        Some(Ok(m)) if texts::<1>(&m)[0].is_some() => ERA,
        _ => NO_ERA,
    }
}

/// How every [`DbError::Lost`] message begins (see [`lost_connection`]).
const UNREACHABLE: &str = "cannot reach PostgreSQL";
const LOST: &str = "the connection to PostgreSQL was lost";

/// Whether an error's text (passed on as a string, as the bot's pipeline does) comes from a
/// lost or unreachable PostgreSQL connection: a failure the store's return mends.
pub fn lost_connection(text: &str) -> bool {
    text.contains(UNREACHABLE) || text.contains(LOST)
}

const LOST_IN_TX: &str =
    "the connection to PostgreSQL was lost during this write; nothing of it was committed";

/// `f`, given up after `bound` (None: no answer in time).
async fn within<T>(bound: Option<Duration>, f: impl Future<Output = T>) -> Option<T> {
    match bound {
        Some(b) => tokio::time::timeout(b, f).await.ok(),
        None => Some(f.await),
    }
}

/// The first `N` columns of the first row of a simple query, as text (None: NULL or absent).
fn texts<const N: usize>(m: &[SimpleQueryMessage]) -> [Option<String>; N] {
    let row = m.iter().find_map(|m| match m {
        SimpleQueryMessage::Row(r) => Some(r),
        _ => None,
    });
    std::array::from_fn(|i| {
        row.and_then(|r| r.try_get(i).ok().flatten())
            .map(str::to_string)
    })
}

/// Connects with or without TLS as the URL's `sslmode` says, start-up bounded by the connect
/// timeout, and drives the connection in a task that forwards notifications.
async fn connect(
    config: &tokio_postgres::Config,
    notes: std_mpsc::Sender<Notice>,
) -> Result<Client, String> {
    use tokio_postgres::config::SslMode;
    let client = match config.get_ssl_mode() {
        SslMode::Disable => {
            let (c, conn) =
                pg::connect_within(config, config.connect(tokio_postgres::NoTls)).await?;
            tokio::spawn(drive(conn, notes));
            c
        }
        _ => {
            let (c, conn) = pg::connect_within(config, config.connect(pg::tls())).await?;
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
    era: &str,
) -> Result<Answer, DbError> {
    match op {
        Op::Batch(sql) | Op::End(sql) => {
            client.batch_execute(&sql).await.map_err(DbError::from)?;
            Ok(Answer::Done)
        }
        Op::Listen(channel) => {
            client
                .batch_execute(&format!("LISTEN {channel}"))
                .await
                .map_err(DbError::from)?;
            Ok(Answer::Done)
        }
        Op::Begin(sql) => {
            // One round trip: the transaction, its id and the server's era (to resolve a
            // COMMIT whose answer is lost).
            let m = client
                .simple_query(&format!("{sql}; SELECT txid_current()::text, {era}"))
                .await
                .map_err(DbError::from)?;
            let [xid, era] = texts(&m);
            Ok(Answer::Begun(
                xid.and_then(|t| t.parse().ok())
                    .map(|xid| Began { xid, era }),
            ))
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
