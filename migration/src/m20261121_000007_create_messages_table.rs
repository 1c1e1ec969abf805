//! Creates the `messages` table: the message tree of each chat (parent links form branches).

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000006_create_chats_table::Chats;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Messages::Table)
                    .if_not_exists()
                    .col(text(Messages::Id).primary_key())
                    .col(text(Messages::ChatId))
                    .col(text_null(Messages::ParentId))
                    .col(string(Messages::Role))
                    .col(text_null(Messages::Content))
                    .col(json_null(Messages::Parts))
                    .col(json_null(Messages::ToolCalls))
                    .col(string_null(Messages::ToolCallId))
                    .col(string_null(Messages::RunId))
                    .col(string_null(Messages::StopReason))
                    .col(big_integer(Messages::Seq))
                    .col(timestamp_with_time_zone(Messages::CreatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_messages_chat_id")
                            .from(Messages::Table, Messages::ChatId)
                            .to(Chats::Table, Chats::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_messages_parent_id")
                            .from(Messages::Table, Messages::ParentId)
                            .to(Messages::Table, Messages::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_messages_chat_id_parent_id")
                    .table(Messages::Table)
                    .col(Messages::ChatId)
                    .col(Messages::ParentId)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_messages_chat_id_seq")
                    .table(Messages::Table)
                    .col(Messages::ChatId)
                    .col(Messages::Seq)
                    .to_owned(),
            )
            .await?;
        // Lets the self-referencing ON DELETE CASCADE find children without a scan.
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_messages_parent_id")
                    .table(Messages::Table)
                    .col(Messages::ParentId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // Dropping the table also drops its indexes and constraints.
        manager
            .drop_table(Table::drop().table(Messages::Table).if_exists().to_owned())
            .await
    }
}

#[derive(DeriveIden)]
pub enum Messages {
    Table,
    Id,
    ChatId,
    ParentId,
    Role,
    Content,
    Parts,
    ToolCalls,
    ToolCallId,
    RunId,
    StopReason,
    Seq,
    CreatedAt,
}
