//! A PostgreSQL database of a test's own, on the server `COLLOQUY_TEST_POSTGRES_URL` names (CI
//! starts one; without it, the tests that need one say so and pass).

use sea_orm::{ConnectionTrait, Database, DatabaseConnection};

pub const POSTGRES_URL_VAR: &str = "COLLOQUY_TEST_POSTGRES_URL";

/// A fresh database, dropped (with its connections) by `drop`.
pub struct OwnDatabase {
    admin: DatabaseConnection,
    name: String,
    pub url: String,
}

impl OwnDatabase {
    /// A new database named after `prefix`; `None` when no server is configured.
    pub async fn create(prefix: &str) -> Option<Self> {
        let Ok(admin_url) = std::env::var(POSTGRES_URL_VAR) else {
            println!("skipped: {POSTGRES_URL_VAR} is not set");
            return None;
        };
        let name = format!("{prefix}_{}", uuid::Uuid::new_v4().simple());
        let admin = Database::connect(&admin_url).await.unwrap();
        admin
            .execute_unprepared(&format!("CREATE DATABASE {name}"))
            .await
            .unwrap();
        let mut url = url::Url::parse(&admin_url).unwrap();
        url.set_path(&name);
        Some(Self {
            admin,
            name,
            url: url.to_string(),
        })
    }

    /// Drops the database, closing whatever is still connected to it.
    pub async fn drop(self) {
        self.admin
            .execute_unprepared(&format!("DROP DATABASE {} WITH (FORCE)", self.name))
            .await
            .unwrap();
    }
}
