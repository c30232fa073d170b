//! `kakeai db status` on PostgreSQL: server, database size, schema version against this
//! kakeai's, pending migrations and rows per table — read without changing anything.

use serde::Serialize;

use super::{Pg, PgError, migrate};

/// A PostgreSQL store as `db status` reports it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PgStatus {
    pub engine: &'static str,
    /// The URL with its password as `***`.
    pub store: String,
    pub server: String,
    pub size_bytes: i64,
    pub schema_version: i64,
    pub latest: i64,
    pub pending: Vec<i64>,
    pub too_new: bool,
    /// (table, rows), kakeai's tables in name order (its own bookkeeping excluded).
    pub tables: Vec<(String, i64)>,
}

pub fn status(pg: &Pg) -> Result<PgStatus, PgError> {
    let version = migrate::version(pg)?;
    let (server, size_bytes, tables) = pg.block(async |c| {
        let server: String = c.query_one("SHOW server_version", &[]).await?.get(0);
        let size: i64 = c
            .query_one("SELECT pg_database_size(current_database())", &[])
            .await?
            .get(0);
        let names: Vec<String> = c
            .query(
                "SELECT table_name::text FROM information_schema.tables
                 WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
                   AND table_name NOT LIKE 'kakeai\\_%'
                 ORDER BY table_name",
                &[],
            )
            .await?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let mut tables = Vec::with_capacity(names.len());
        for n in names {
            let q = format!("SELECT COUNT(*) FROM {}", super::copy::ident(&n));
            let rows: i64 = c.query_one(&q, &[]).await?.get(0);
            tables.push((n, rows));
        }
        Ok((server, size, tables))
    })?;
    let latest = migrate::latest();
    Ok(PgStatus {
        engine: "postgresql",
        store: pg.shown().to_string(),
        server,
        size_bytes,
        schema_version: version,
        latest,
        pending: migrate::MIGRATIONS
            .iter()
            .map(|(v, _)| *v)
            .filter(|v| *v > version)
            .collect(),
        too_new: version > latest,
        tables,
    })
}

impl PgStatus {
    /// The text `db status` prints.
    pub fn text(&self) -> String {
        let mut out = format!(
            "engine: {} (server {})\nstore: {}\nsize: {} bytes",
            self.engine, self.server, self.store, self.size_bytes
        );
        out.push_str(&crate::store::status::schema_text(
            self.schema_version,
            self.latest,
            &self.pending,
            self.too_new,
            "`kakeai db migrate` applies them",
            &self.tables,
        ));
        out
    }
}
