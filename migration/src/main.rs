//! Command-line runner for Colloquy's migrations (`up`, `down`, `status`, `fresh`, ...).
//! Reads the connection string from `DATABASE_URL` or `--database-url`.

use sea_orm_migration::prelude::*;

#[tokio::main]
async fn main() {
    cli::run_cli(migration::Migrator).await;
}
