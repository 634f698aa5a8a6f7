//! Group commit for the ledger's charge writes. Every charge request writes twice (its key
//! recorded as `processing`, then its decision), and each write is a `synchronous=FULL` commit:
//! one fsync of the WAL. One at a time, through SQLite's single writer, that capped the provider
//! at a few hundred charges a second however many clients waited (issue 28, item 5).
//!
//! So those writes go to one writer task with a connection of its own. It takes every job
//! waiting (up to [`MAX_BATCH`]), runs them in order inside one `BEGIN IMMEDIATE` transaction
//! and commits once: one fsync for the lot. Each job is answered only after that commit
//! returned, so nothing is ever acknowledged before it is on disk. There is no waiting for a
//! batch to fill: an idle writer takes a lone job at once, and jobs that arrive while a batch is
//! being synced form the next one.
//!
//! The jobs of one batch see each other's writes in order (two requests under one key in one
//! batch: the second finds the first's `processing` row, as it would one transaction later).
//! Other processes on the same file still interleave safely: the batch holds SQLite's write
//! lock like any other writer. If any statement of a batch fails, the whole batch is rolled
//! back and every job in it is answered with an error: nothing any of them wrote was kept, which
//! is what the provider's 500 says ("nothing was charged by this request").

use std::io;

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection, SqliteConnection};
use tokio::sync::{mpsc, oneshot};

use crate::api::ChargeRequest;
use crate::ledger::{Begin, LedgerResult, Settled, begin_on, settle_on};

/// The most jobs one transaction takes.
const MAX_BATCH: usize = 512;

/// One charge-request write, with where its answer goes.
enum Job {
    Begin {
        key: String,
        request: ChargeRequest,
        now_ms: i64,
        reply: oneshot::Sender<LedgerResult<Begin>>,
    },
    Settle {
        key: String,
        attempt: String,
        request: ChargeRequest,
        now_ms: i64,
        reply: oneshot::Sender<LedgerResult<Settled>>,
    },
}

/// A job run inside the batch's transaction, its answer held until the commit.
enum Done {
    Begin(oneshot::Sender<LedgerResult<Begin>>, Begin),
    Settle(oneshot::Sender<LedgerResult<Settled>>, Settled),
}

impl Job {
    /// Runs the job's statements on the batch's transaction; on failure, hands the job back
    /// (to be answered with the error once the batch is rolled back).
    async fn run(self, conn: &mut SqliteConnection) -> Result<Done, (Self, sqlx::Error)> {
        match self {
            Job::Begin { key, request, now_ms, reply } => match begin_on(conn, &key, &request, now_ms).await {
                Ok(begun) => Ok(Done::Begin(reply, begun)),
                Err(e) => Err((Job::Begin { key, request, now_ms, reply }, e)),
            },
            Job::Settle { key, attempt, request, now_ms, reply } => {
                match settle_on(conn, &key, &attempt, &request, now_ms).await {
                    Ok(settled) => Ok(Done::Settle(reply, settled)),
                    Err(e) => Err((Job::Settle { key, attempt, request, now_ms, reply }, e)),
                }
            }
        }
    }

    /// Answers with `error` (the batch was rolled back). A caller that stopped waiting is fine.
    fn fail(self, error: sqlx::Error) {
        match self {
            Job::Begin { reply, .. } => drop(reply.send(Err(error))),
            Job::Settle { reply, .. } => drop(reply.send(Err(error))),
        }
    }
}

impl Done {
    fn send(self) {
        match self {
            Done::Begin(reply, begun) => drop(reply.send(Ok(begun))),
            Done::Settle(reply, settled) => drop(reply.send(Ok(settled))),
        }
    }

    fn fail(self, error: sqlx::Error) {
        match self {
            Done::Begin(reply, _) => drop(reply.send(Err(error))),
            Done::Settle(reply, _) => drop(reply.send(Err(error))),
        }
    }
}

/// The error each job of a rolled-back batch gets (sqlx errors cannot be cloned; the text is
/// for the log, never for an answer).
fn rolled_back(cause: &sqlx::Error) -> sqlx::Error {
    sqlx::Error::Io(io::Error::other(format!("the ledger's group commit was rolled back: {cause}")))
}

/// The sending side of the writer task; cheap to clone. The task ends when the last one is gone.
#[derive(Debug, Clone)]
pub(crate) struct Writer {
    jobs: mpsc::UnboundedSender<Job>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Job::Begin { .. } => "Job::Begin",
            Job::Settle { .. } => "Job::Settle",
        })
    }
}

impl Writer {
    /// Opens the writer's own connection (the file is already migrated) and starts its task.
    pub(crate) async fn start(options: SqliteConnectOptions) -> LedgerResult<Self> {
        let conn = options.connect().await?;
        let (jobs, queue) = mpsc::unbounded_channel();
        tokio::spawn(run(conn, options, queue));
        Ok(Self { jobs })
    }

    pub(crate) async fn begin(&self, key: &str, request: &ChargeRequest, now_ms: i64) -> LedgerResult<Begin> {
        let (reply, answer) = oneshot::channel();
        self.submit(Job::Begin { key: key.to_string(), request: request.clone(), now_ms, reply }, answer).await
    }

    pub(crate) async fn settle(
        &self,
        key: &str,
        attempt: &str,
        request: &ChargeRequest,
        now_ms: i64,
    ) -> LedgerResult<Settled> {
        let (reply, answer) = oneshot::channel();
        let job =
            Job::Settle { key: key.to_string(), attempt: attempt.to_string(), request: request.clone(), now_ms, reply };
        self.submit(job, answer).await
    }

    async fn submit<T>(&self, job: Job, answer: oneshot::Receiver<LedgerResult<T>>) -> LedgerResult<T> {
        let gone = || sqlx::Error::Io(io::Error::other("the ledger's writer has stopped"));
        self.jobs.send(job).map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }
}

/// The writer task: a batch per round, until every [`Writer`] is dropped.
async fn run(mut conn: SqliteConnection, options: SqliteConnectOptions, mut queue: mpsc::UnboundedReceiver<Job>) {
    let mut batch: Vec<Job> = Vec::with_capacity(MAX_BATCH);
    while queue.recv_many(&mut batch, MAX_BATCH).await > 0 {
        if let Err(e) = commit(&mut conn, batch.drain(..)).await {
            tracing::error!(error = %e, "the ledger's group commit failed; its requests were answered with errors");
            // The connection may be what broke: the next batch gets a fresh one if it can.
            match options.connect().await {
                Ok(fresh) => conn = fresh,
                Err(e) => tracing::error!(error = %e, "cannot reopen the ledger's writer connection"),
            }
        }
    }
}

/// Runs `jobs` in one transaction and answers them: all after the commit, or all with an error.
async fn commit(conn: &mut SqliteConnection, jobs: impl Iterator<Item = Job>) -> LedgerResult<()> {
    let mut jobs = jobs.peekable();
    let mut tx = match conn.begin_with("BEGIN IMMEDIATE").await {
        Ok(tx) => tx,
        Err(e) => {
            jobs.for_each(|job| job.fail(rolled_back(&e)));
            return Err(e);
        }
    };
    let mut done: Vec<Done> = Vec::new();
    while let Some(job) = jobs.next() {
        match job.run(&mut tx).await {
            Ok(answer) => done.push(answer),
            Err((job, e)) => {
                let _ = tx.rollback().await;
                job.fail(rolled_back(&e));
                done.into_iter().for_each(|d| d.fail(rolled_back(&e)));
                jobs.for_each(|job| job.fail(rolled_back(&e)));
                return Err(e);
            }
        }
    }
    match tx.commit().await {
        Ok(()) => {
            done.into_iter().for_each(Done::send);
            Ok(())
        }
        Err(e) => {
            done.into_iter().for_each(|d| d.fail(rolled_back(&e)));
            Err(e)
        }
    }
}
