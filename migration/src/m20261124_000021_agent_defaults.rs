//! Every chat belongs to an agent: `agents.is_default` (one default agent per user) and
//! `agents.custom_tools` (custom tool entries, docs/spec.md#custom-tools-over-mcp: `{"type": "mcp",
//! "config": {"server_id", "tool_name"}}`); each user without a default agent gets one (id
//! `agent_<user id>`), and every chat without an agent gets its owner's default.

use sea_orm_migration::sea_orm::ConnectionTrait;
use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000001_create_users_table::Users;
use crate::m20261121_000005_create_agents_table::Agents;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite adds one column per ALTER TABLE.
        manager
            .alter_table(
                Table::alter()
                    .table(Agents::Table)
                    .add_column(boolean(NewColumn::IsDefault).default(false))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Agents::Table)
                    .add_column(json_null(NewColumn::CustomTools))
                    .to_owned(),
            )
            .await?;
        let db = manager.get_connection();
        let without = Query::select()
            .column(Users::Id)
            .from(Users::Table)
            .and_where(
                Expr::col(Users::Id).not_in_subquery(
                    Query::select()
                        .column(Agents::UserId)
                        .from(Agents::Table)
                        .and_where(Expr::col(NewColumn::IsDefault).eq(true))
                        .to_owned(),
                ),
            )
            .to_owned();
        let now = sea_orm_migration::sea_orm::prelude::ChronoDateTimeUtc::from(
            std::time::SystemTime::now(),
        );
        for row in db.query_all(&without).await? {
            let user: String = row.try_get("", "id")?;
            let columns = [
                "id",
                "user_id",
                "name",
                "tools_enabled",
                "is_default",
                "created_at",
                "updated_at",
            ];
            let insert = Query::insert()
                .into_table(Agents::Table)
                .columns(columns.map(Alias::new))
                .values_panic([
                    format!("agent_{user}").into(),
                    user.into(),
                    "Default".into(),
                    true.into(),
                    true.into(),
                    now.into(),
                    now.into(),
                ])
                .to_owned();
            db.execute(&insert).await?;
        }
        db.execute_unprepared(
            "UPDATE chats SET agent_id = (SELECT agents.id FROM agents \
             WHERE agents.user_id = chats.user_id AND agents.is_default) \
             WHERE agent_id IS NULL",
        )
        .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [NewColumn::CustomTools, NewColumn::IsDefault] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Agents::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum NewColumn {
    IsDefault,
    CustomTools,
}
